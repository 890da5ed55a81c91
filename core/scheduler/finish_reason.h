// FinishReason: why a request stopped (SCHEDULER_SPEC 7.2), with its JSON form.
// Plain value type.
#pragma once

#include <cstdint>
#include <string>

namespace radixserve::sched {

enum class FinishKind : uint8_t {
  kNone = 0,
  kMatchedToken,  // EOS or a stop token id: {"type":"stop","matched":id}
  kMatchedStr,    // a stop string: {"type":"stop","matched":"str"}
  kLength,        // max_new_tokens reached: {"type":"length","length":n}
  kAbort,         // aborted or refused: {"type":"abort","message":...,"status_code":...}
};

struct FinishReason {
  FinishKind kind = FinishKind::kNone;
  int32_t matched_token = -1;
  int32_t length = 0;
  int32_t status_code = 0;
  std::string matched_str;
  std::string message;

  bool finished() const { return kind != FinishKind::kNone; }
  static FinishReason Token(int32_t id) { FinishReason r; r.kind = FinishKind::kMatchedToken; r.matched_token = id; return r; }
  static FinishReason Str(std::string s) { FinishReason r; r.kind = FinishKind::kMatchedStr; r.matched_str = std::move(s); return r; }
  static FinishReason Length(int32_t n) { FinishReason r; r.kind = FinishKind::kLength; r.length = n; return r; }
  static FinishReason Abort(std::string msg, int32_t code) {
    FinishReason r; r.kind = FinishKind::kAbort; r.message = std::move(msg); r.status_code = code; return r;
  }
  // "null" when not finished.
  std::string ToJson() const;
};

}  // namespace radixserve::sched
