#include "core/scheduler/finish_reason.h"

#include <nlohmann/json.hpp>

namespace radixserve::sched {

std::string FinishReason::ToJson() const {
  nlohmann::json j;
  switch (kind) {
    case FinishKind::kNone: return "null";
    case FinishKind::kMatchedToken: j = {{"type", "stop"}, {"matched", matched_token}}; break;
    case FinishKind::kMatchedStr: j = {{"type", "stop"}, {"matched", matched_str}}; break;
    case FinishKind::kLength: j = {{"type", "length"}, {"length", length}}; break;
    case FinishKind::kAbort:
      j = {{"type", "abort"}, {"message", message}, {"status_code", status_code}, {"err_type", nullptr}};
      break;
  }
  return j.dump();
}

}  // namespace radixserve::sched
