// FinishReason: why a request stopped (SCHEDULER_SPEC 7.2), the one definition
// the scheduler, the wire messages and the HTTP API share, with its JSON form.
// Plain value type.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace radixserve {

// Values travel as a byte in transport::OutputEntry::finish_kind: append, never renumber.
enum class FinishKind : uint8_t {
  kNone = 0,
  kMatchedToken = 1,  // EOS or a stop token id: {"type":"stop","matched":id}
  kMatchedStr = 2,    // a stop string: {"type":"stop","matched":"str"}
  kLength = 3,        // max_new_tokens reached: {"type":"length","length":n}
  kAbort = 4,         // aborted or refused: {"type":"abort","message":...,"status_code":...,"err_type":null}
};
inline constexpr uint8_t kMaxFinishKind = static_cast<uint8_t>(FinishKind::kAbort);

struct FinishReason {
  FinishKind kind = FinishKind::kNone;
  int32_t matched_token = -1;
  int32_t length = 0;
  int32_t status_code = 0;  // kAbort: the HTTP status (400 refused, 503 overloaded or timed out, 500 failed)
  std::string matched_str;
  std::string message;

  bool finished() const { return kind != FinishKind::kNone; }
  bool is_stop() const { return kind == FinishKind::kMatchedToken || kind == FinishKind::kMatchedStr; }
  static FinishReason Token(int32_t id) { FinishReason r; r.kind = FinishKind::kMatchedToken; r.matched_token = id; return r; }
  static FinishReason Str(std::string s) { FinishReason r; r.kind = FinishKind::kMatchedStr; r.matched_str = std::move(s); return r; }
  static FinishReason Length(int32_t n) { FinishReason r; r.kind = FinishKind::kLength; r.length = n; return r; }
  static FinishReason Abort(std::string msg, int32_t code) {
    FinishReason r; r.kind = FinishKind::kAbort; r.message = std::move(msg); r.status_code = code; return r;
  }
  // SGLang's meta_info.finish_reason object; null when not finished.
  nlohmann::json ToJsonValue() const;
  std::string ToJson() const;
};

}  // namespace radixserve
