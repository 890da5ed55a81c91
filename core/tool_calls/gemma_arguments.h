// GemmaArguments: rewrites Gemma 4's argument syntax into JSON while it streams.
//
// Gemma 4 writes a call's arguments as {key:value,...}: keys bare, strings between <|"|> marks
// with nothing escaped inside, numbers, true / false, nested {} and [], and (the template prints
// Python's None for null) None. Out comes the JSON text: {"key": value, ...}. JSON strings written
// as such pass through. A bare word that is not a key, literal or number becomes a string.
//
// Not thread-safe; one per call.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace radixserve::tool_calls {

class GemmaArguments {
 public:
  enum class State : uint8_t { kReading, kDone, kFailed };

  // Translates from the start of `text` (what follows the bytes consumed before), appending JSON to
  // `json`. Returns how many bytes it consumed: it stops after the object's closing brace, at a byte
  // it refuses, or before a "<" whose meaning the end of `text` hides (unless `at_end`).
  size_t Translate(std::string_view text, bool at_end, std::string* json);
  State state() const { return state_; }

 private:
  // Writes the bare word read so far; `next` is the byte after it (':' makes it a key).
  void FlushWord(char next, std::string* json);
  // In a <|"|> string: appends byte `c` JSON-escaped.
  static void AppendEscaped(char c, std::string* json);

  State state_ = State::kReading;
  int depth_ = 0;
  bool in_text_ = false;         // between <|"|> marks
  bool in_json_string_ = false;  // in a "..." string
  bool json_escape_ = false;
  std::string word_;
};

}  // namespace radixserve::tool_calls
