#include "core/tool_calls/gemma_arguments.h"

#include <nlohmann/json.hpp>

#include "core/tool_calls/marker_search.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kQuote = "<|\"|>";

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '+' || c == '.';
}

}  // namespace

void GemmaArguments::AppendEscaped(char c, std::string* json) {
  static const char* kHex = "0123456789abcdef";
  switch (c) {
    case '"': json->append("\\\""); return;
    case '\\': json->append("\\\\"); return;
    case '\n': json->append("\\n"); return;
    case '\r': json->append("\\r"); return;
    case '\t': json->append("\\t"); return;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        json->append("\\u00");
        json->push_back(kHex[(c >> 4) & 0xf]);
        json->push_back(kHex[c & 0xf]);
      } else {
        json->push_back(c);
      }
  }
}

void GemmaArguments::FlushWord(char next, std::string* json) {
  if (word_.empty()) return;
  if (next == ':') {
    json->append("\"" + word_ + "\"");
  } else if (word_ == "true" || word_ == "false" || word_ == "null") {
    json->append(word_);
  } else if (word_ == "True" || word_ == "False") {
    json->append(word_ == "True" ? "true" : "false");
  } else if (word_ == "None") {
    json->append("null");
  } else {
    auto j = nlohmann::json::parse(word_, nullptr, false);
    json->append(!j.is_discarded() && j.is_number() ? word_ : "\"" + word_ + "\"");
  }
  word_.clear();
}

size_t GemmaArguments::Translate(std::string_view text, bool at_end, std::string* json) {
  size_t i = 0;
  while (i < text.size() && state_ == State::kReading) {
    char c = text[i];
    if (depth_ == 0) {  // before the object
      if (IsSpace(c)) {
        ++i;
        continue;
      }
      if (c != '{') {
        state_ = State::kFailed;
        break;
      }
      depth_ = 1;
      json->push_back('{');
      ++i;
      continue;
    }
    if (in_json_string_) {
      json->push_back(c);
      if (json_escape_) {
        json_escape_ = false;
      } else if (c == '\\') {
        json_escape_ = true;
      } else if (c == '"') {
        in_json_string_ = false;
      }
      ++i;
      continue;
    }
    if (c == '<') {  // only <|"|> may appear, in a string or out of one
      std::string_view rest = text.substr(i);
      if (rest.size() < kQuote.size() && kQuote.starts_with(rest) && !at_end) break;
      if (!rest.starts_with(kQuote)) {
        state_ = State::kFailed;
        break;
      }
      if (!in_text_) FlushWord('"', json);
      json->push_back('"');
      in_text_ = !in_text_;
      i += kQuote.size();
      continue;
    }
    if (in_text_) {
      AppendEscaped(c, json);
      ++i;
      continue;
    }
    if (IsWordChar(c)) {
      word_.push_back(c);
      ++i;
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        FlushWord(c, json);
        ++depth_;
        json->push_back(c);
        break;
      case '}':
      case ']':
        FlushWord(c, json);
        json->push_back(c);
        if (--depth_ == 0) state_ = State::kDone;
        break;
      case ',':
        FlushWord(c, json);
        json->append(", ");
        break;
      case ':':
        FlushWord(c, json);
        json->append(": ");
        break;
      case '"':
        FlushWord(c, json);
        json->push_back(c);
        in_json_string_ = true;
        break;
      default:
        if (!IsSpace(c)) {
          state_ = State::kFailed;
          return i;
        }
        FlushWord(c, json);
    }
    ++i;
  }
  if (at_end && state_ == State::kReading) FlushWord(' ', json);
  return i;
}

}  // namespace radixserve::tool_calls
