#include "core/util/finish_reason.h"

#include <nlohmann/json.hpp>

namespace radixserve {

nlohmann::json FinishReason::ToJsonValue() const {
  switch (kind) {
    case FinishKind::kNone: return nullptr;
    case FinishKind::kMatchedToken: return {{"type", "stop"}, {"matched", matched_token}};
    case FinishKind::kMatchedStr: return {{"type", "stop"}, {"matched", matched_str}};
    case FinishKind::kLength: return {{"type", "length"}, {"length", length}};
    case FinishKind::kAbort:
      return {{"type", "abort"}, {"message", message}, {"status_code", status_code}, {"err_type", nullptr}};
  }
  return nullptr;
}

std::string FinishReason::ToJson() const { return ToJsonValue().dump(); }

}  // namespace radixserve
