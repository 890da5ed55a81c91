// JsonScanner: an incremental JSON syntax checker that reports where values and keys begin and end.
//
// It is fed the bytes of one JSON value (RFC 8259; whitespace before it allowed) as they are
// generated, checks them byte by byte and reports structural events with byte offsets, so a caller
// can stream part of a value (a tool call's arguments) before the rest exists and learn at the first
// wrong byte that the text is not JSON. It stops after the value's last byte or at the first byte
// that cannot continue it. Bytes >= 0x80 in strings are taken as they are (UTF-8 is not checked).
//
// Not thread-safe; one scanner per value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace radixserve::tool_calls {

class JsonScanner {
 public:
  enum class Kind : uint8_t { kObject, kArray, kString, kNumber, kLiteral };
  enum class EventType : uint8_t {
    kValueBegin,  // offset: the value's first byte
    kValueEnd,    // offset: one past its last byte (a number's end is seen at the byte after it)
    kKeyBegin,    // offset: the key's opening quote
    kKeyEnd,      // offset: one past its closing quote
  };
  struct Event {
    EventType type;
    Kind kind;     // the value's kind; kString for keys
    int depth;     // containers around the value (0: the top-level value); a key has its value's depth
    size_t offset;
  };
  enum class State : uint8_t { kScanning, kDone, kFailed };

  // Scans `bytes`, the continuation of what was scanned before, appending its events to `events`.
  // Returns how many bytes it used: all, unless the value ended or a byte was refused first.
  size_t Scan(std::string_view bytes, std::vector<Event>* events);
  // End of input: a top-level number ends here; any other unfinished value fails.
  void Finish(std::vector<Event>* events);

  State state() const { return mode_ == Mode::kDone ? State::kDone : mode_ == Mode::kFailed ? State::kFailed : State::kScanning; }
  size_t offset() const { return offset_; }          // bytes used so far
  size_t error_offset() const { return error_offset_; }  // kFailed: the refused byte (or the end)

 private:
  enum class Mode : uint8_t {
    kValue,       // a value is expected
    kArrayFirst,  // after '[': a value or ']'
    kKeyOrEnd,    // after '{': a key or '}'
    kKey,         // after ',' in an object: a key
    kColon,       // after a key
    kAfterValue,  // after an element or member: ',' or the container's closing bracket
    kString,      // in a string (a key when in_key_)
    kEscape,      // after a backslash in a string
    kUnicode,     // in the hex digits of \uXXXX
    kNumber,
    kLiteral,     // in true / false / null
    kDone,
    kFailed,
  };
  enum class Num : uint8_t { kMinus, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };

  // Consumes byte `c` at offset_; false when it was not used (the value ended before it, or refused).
  bool Step(char c, std::vector<Event>* events);
  bool BeginValue(char c, std::vector<Event>* events);
  // A value at the current depth ended; the mode the enclosing context continues in.
  void ValueDone();
  void Fail() {
    mode_ = Mode::kFailed;
    error_offset_ = offset_;
  }
  int depth() const { return static_cast<int>(stack_.size()); }

  Mode mode_ = Mode::kValue;
  Num num_ = Num::kInt;
  bool in_key_ = false;
  int hex_left_ = 0;
  std::string_view literal_;  // the literal being matched, and how much of it is matched
  size_t literal_pos_ = 0;
  std::vector<char> stack_;   // '{' or '[' per open container
  size_t offset_ = 0;
  size_t error_offset_ = 0;
};

}  // namespace radixserve::tool_calls
