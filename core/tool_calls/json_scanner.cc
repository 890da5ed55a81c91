#include "core/tool_calls/json_scanner.h"

namespace radixserve::tool_calls {
namespace {

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

size_t JsonScanner::Scan(std::string_view bytes, std::vector<Event>* events) {
  size_t used = 0;
  while (used < bytes.size() && mode_ != Mode::kDone && mode_ != Mode::kFailed) {
    if (!Step(bytes[used], events)) break;
    ++used;
    ++offset_;
  }
  return used;
}

void JsonScanner::Finish(std::vector<Event>* events) {
  if (mode_ == Mode::kDone || mode_ == Mode::kFailed) return;
  bool number_can_end = mode_ == Mode::kNumber &&
                        (num_ == Num::kZero || num_ == Num::kInt || num_ == Num::kFrac || num_ == Num::kExpDigits);
  if (number_can_end && stack_.empty()) {
    events->push_back({EventType::kValueEnd, Kind::kNumber, 0, offset_});
    mode_ = Mode::kDone;
    return;
  }
  Fail();
}

void JsonScanner::ValueDone() { mode_ = stack_.empty() ? Mode::kDone : Mode::kAfterValue; }

bool JsonScanner::BeginValue(char c, std::vector<Event>* events) {
  auto begin = [&](Kind kind) { events->push_back({EventType::kValueBegin, kind, depth(), offset_}); };
  switch (c) {
    case '{':
      begin(Kind::kObject);
      stack_.push_back('{');
      mode_ = Mode::kKeyOrEnd;
      return true;
    case '[':
      begin(Kind::kArray);
      stack_.push_back('[');
      mode_ = Mode::kArrayFirst;
      return true;
    case '"':
      begin(Kind::kString);
      in_key_ = false;
      mode_ = Mode::kString;
      return true;
    case 't':
    case 'f':
    case 'n':
      begin(Kind::kLiteral);
      literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
      literal_pos_ = 1;
      mode_ = Mode::kLiteral;
      return true;
    default:
      if (c == '-' || IsDigit(c)) {
        begin(Kind::kNumber);
        num_ = c == '-' ? Num::kMinus : c == '0' ? Num::kZero : Num::kInt;
        mode_ = Mode::kNumber;
        return true;
      }
      Fail();
      return false;
  }
}

bool JsonScanner::Step(char c, std::vector<Event>* events) {
  switch (mode_) {
    case Mode::kValue:
      if (IsWs(c)) return true;
      return BeginValue(c, events);
    case Mode::kArrayFirst:
      if (IsWs(c)) return true;
      if (c == ']') {
        stack_.pop_back();
        events->push_back({EventType::kValueEnd, Kind::kArray, depth(), offset_ + 1});
        ValueDone();
        return true;
      }
      return BeginValue(c, events);
    case Mode::kKeyOrEnd:
    case Mode::kKey:
      if (IsWs(c)) return true;
      if (c == '}' && mode_ == Mode::kKeyOrEnd) {
        stack_.pop_back();
        events->push_back({EventType::kValueEnd, Kind::kObject, depth(), offset_ + 1});
        ValueDone();
        return true;
      }
      if (c != '"') break;
      events->push_back({EventType::kKeyBegin, Kind::kString, depth(), offset_});
      in_key_ = true;
      mode_ = Mode::kString;
      return true;
    case Mode::kColon:
      if (IsWs(c)) return true;
      if (c != ':') break;
      mode_ = Mode::kValue;
      return true;
    case Mode::kAfterValue:
      if (IsWs(c)) return true;
      if (c == ',') {
        mode_ = stack_.back() == '{' ? Mode::kKey : Mode::kValue;
        return true;
      }
      if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
        stack_.pop_back();
        events->push_back({EventType::kValueEnd, c == '}' ? Kind::kObject : Kind::kArray, depth(), offset_ + 1});
        ValueDone();
        return true;
      }
      break;
    case Mode::kString:
      if (c == '"') {
        if (in_key_) {
          events->push_back({EventType::kKeyEnd, Kind::kString, depth(), offset_ + 1});
          mode_ = Mode::kColon;
        } else {
          events->push_back({EventType::kValueEnd, Kind::kString, depth(), offset_ + 1});
          ValueDone();
        }
        return true;
      }
      if (c == '\\') {
        mode_ = Mode::kEscape;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) break;  // control characters must be escaped
      return true;
    case Mode::kEscape:
      if (c == 'u') {
        hex_left_ = 4;
        mode_ = Mode::kUnicode;
        return true;
      }
      if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
        mode_ = Mode::kString;
        return true;
      }
      break;
    case Mode::kUnicode:
      if (!IsHex(c)) break;
      if (--hex_left_ == 0) mode_ = Mode::kString;
      return true;
    case Mode::kLiteral:
      if (c != literal_[literal_pos_]) break;
      if (++literal_pos_ == literal_.size()) {
        events->push_back({EventType::kValueEnd, Kind::kLiteral, depth(), offset_ + 1});
        ValueDone();
      }
      return true;
    case Mode::kNumber: {
      bool digit = IsDigit(c);
      switch (num_) {
        case Num::kMinus:
          if (!digit) break;
          num_ = c == '0' ? Num::kZero : Num::kInt;
          return true;
        case Num::kZero:
        case Num::kInt:
          if (digit && num_ == Num::kInt) return true;
          if (c == '.') {
            num_ = Num::kDot;
            return true;
          }
          if (c == 'e' || c == 'E') {
            num_ = Num::kExp;
            return true;
          }
          break;
        case Num::kDot:
          if (!digit) break;
          num_ = Num::kFrac;
          return true;
        case Num::kFrac:
          if (digit) return true;
          if (c == 'e' || c == 'E') {
            num_ = Num::kExp;
            return true;
          }
          break;
        case Num::kExp:
          if (c == '+' || c == '-') {
            num_ = Num::kExpSign;
            return true;
          }
          if (!digit) break;
          num_ = Num::kExpDigits;
          return true;
        case Num::kExpSign:
          if (!digit) break;
          num_ = Num::kExpDigits;
          return true;
        case Num::kExpDigits:
          if (digit) return true;
          break;
      }
      // `c` is not part of the number: the number ends before it if it can end here.
      if (num_ != Num::kZero && num_ != Num::kInt && num_ != Num::kFrac && num_ != Num::kExpDigits) break;
      events->push_back({EventType::kValueEnd, Kind::kNumber, depth(), offset_});
      ValueDone();
      if (mode_ == Mode::kDone) return false;  // a top-level number: `c` belongs to what follows
      return Step(c, events);
    }
    case Mode::kDone:
    case Mode::kFailed:
      return false;
  }
  Fail();
  return false;
}

}  // namespace radixserve::tool_calls
