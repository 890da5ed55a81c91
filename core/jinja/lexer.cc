#include "core/jinja/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/jinja/py_string.h"

namespace radixserve::jinja {

namespace {

// Python's \s for one code point at s[pos]; *len receives its byte length.
bool WhitespaceAt(std::string_view s, size_t pos, size_t* len) {
  size_t p = pos;
  const bool ws = IsPyWhitespace(NextCodepoint(s, &p));
  *len = p - pos;
  return ws;
}

size_t SkipWhitespace(std::string_view s, size_t pos) {
  size_t len;
  while (pos < s.size() && WhitespaceAt(s, pos, &len)) pos += len;
  return pos;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// Digits with single underscores between them ("1_000"); returns the end, or pos if none.
size_t ScanDigits(std::string_view s, size_t pos) {
  if (pos >= s.size() || !IsDigit(s[pos])) return pos;
  size_t p = pos + 1;
  while (p < s.size()) {
    if (IsDigit(s[p])) {
      ++p;
    } else if (s[p] == '_' && p + 1 < s.size() && IsDigit(s[p + 1])) {
      p += 2;
    } else {
      break;
    }
  }
  return p;
}

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  Result<std::vector<Token>> Run() {
    while (pos_ < src_.size()) {
      const size_t idx = FindTagStart(pos_);
      if (idx == std::string::npos) {
        EmitData(src_.substr(pos_));
        Advance(src_.size());
        break;
      }
      const char kind = src_[idx + 1];
      size_t after = idx + 2;
      const char sign = (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) ? src_[after] : 0;
      if (sign) ++after;
      std::string text = src_.substr(pos_, idx - pos_);
      if (sign == '-') {
        text = PyStrip(text, std::nullopt, false, true);
      } else if (sign != '+' && kind != '{') {
        LStrip(&text);
      }
      EmitData(std::move(text));
      Advance(after);
      size_t raw_body = 0;
      if (kind == '#') {
        RS_RETURN_IF_ERROR(LexComment());
      } else if (kind == '%' && MatchRawBegin(after, &raw_body)) {
        Advance(raw_body);
        RS_RETURN_IF_ERROR(LexRaw());
      } else {
        Emit(kind == '%' ? TokenType::kBlockBegin : TokenType::kVarBegin, "");
        RS_RETURN_IF_ERROR(LexTag(kind == '%'));
      }
    }
    Emit(TokenType::kEof, "");
    return std::move(out_);
  }

 private:
  Status Fail(const std::string& message) const {
    return Status::Corrupt("line " + std::to_string(line_) + ": syntax error: " + message);
  }

  size_t FindTagStart(size_t from) const {
    for (size_t p = src_.find('{', from); p != std::string::npos; p = src_.find('{', p + 1)) {
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
    }
    return std::string::npos;
  }

  void Advance(size_t to) {
    line_ += static_cast<int>(std::count(src_.begin() + pos_, src_.begin() + to, '\n'));
    pos_ = to;
  }

  void Emit(TokenType type, std::string value) { out_.push_back(Token{type, std::move(value), line_}); }

  void EmitData(std::string text) {
    if (!text.empty()) Emit(TokenType::kData, std::move(text));
  }

  // lstrip_blocks: drop the spaces and tabs that alone precede the tag on its line.
  void LStrip(std::string* text) const {
    const size_t nl = text->rfind('\n');
    const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting_) return;
    if (l_pos == text->size() || SkipWhitespace(*text, l_pos) != text->size()) return;
    text->resize(l_pos);
  }

  // A tag end was matched up to `end`: remember whether it consumed a newline.
  void EndTag(TokenType type, size_t end) {
    Emit(type, "");
    line_starting_ = src_[end - 1] == '\n';
    Advance(end);
  }

  Status LexComment() {
    const size_t q = src_.find("#}", pos_);
    if (q == std::string::npos) return Fail("missing end of comment tag");
    size_t end = q + 2;
    if (q > pos_ && src_[q - 1] == '-') {
      end = SkipWhitespace(src_, end);
    } else if (!(q > pos_ && src_[q - 1] == '+') && end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    line_starting_ = src_[end - 1] == '\n';
    Advance(end);
    return Status::Ok();
  }

  // "{%" [sign] ws "raw" ws ("-%}" ws | "%}"); body receives where the raw text starts.
  bool MatchRawBegin(size_t p, size_t* body) const {
    p = SkipWhitespace(src_, p);
    if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && IsNameChar(src_[p + 3]))) return false;
    p = SkipWhitespace(src_, p + 3);
    if (src_.compare(p, 3, "-%}") == 0) {
      *body = SkipWhitespace(src_, p + 3);
      return true;
    }
    if (src_.compare(p, 2, "%}") == 0) {
      *body = p + 2;
      return true;
    }
    return false;
  }

  Status LexRaw() {
    for (size_t p = src_.find("{%", pos_); p != std::string::npos; p = src_.find("{%", p + 1)) {
      size_t q = p + 2;
      const char sign = (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) ? src_[q] : 0;
      if (sign) ++q;
      q = SkipWhitespace(src_, q);
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q = SkipWhitespace(src_, q + 6);
      size_t end;
      if (src_.compare(q, 3, "+%}") == 0) {
        end = q + 3;
      } else if (src_.compare(q, 3, "-%}") == 0) {
        end = SkipWhitespace(src_, q + 3);
      } else if (src_.compare(q, 2, "%}") == 0) {
        end = q + 2 + ((q + 2 < src_.size() && src_[q + 2] == '\n') ? 1 : 0);
      } else {
        continue;
      }
      std::string text = src_.substr(pos_, p - pos_);
      if (sign == '-') {
        text = PyStrip(text, std::nullopt, false, true);
      } else if (sign != '+') {
        LStrip(&text);
      }
      EmitData(std::move(text));
      line_starting_ = src_[end - 1] == '\n';
      Advance(end);
      return Status::Ok();
    }
    return Fail("missing end of raw directive");
  }

  Status LexTag(bool block) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= src_.size()) return Fail(block ? "missing end of block tag '%}'" : "missing end of '}}'");
      const std::string_view rest = std::string_view(src_).substr(pos_);
      if (balance.empty()) {
        if (block && rest.substr(0, 3) == "+%}") {
          EndTag(TokenType::kBlockEnd, pos_ + 3);
          return Status::Ok();
        }
        if (rest.substr(0, 3) == (block ? "-%}" : "-}}")) {
          EndTag(block ? TokenType::kBlockEnd : TokenType::kVarEnd, SkipWhitespace(src_, pos_ + 3));
          return Status::Ok();
        }
        if (rest.substr(0, 2) == (block ? "%}" : "}}")) {
          size_t end = pos_ + 2;
          if (block && end < src_.size() && src_[end] == '\n') ++end;  // trim_blocks
          EndTag(block ? TokenType::kBlockEnd : TokenType::kVarEnd, end);
          return Status::Ok();
        }
      }
      size_t ws_len;
      const char c = src_[pos_];
      if (WhitespaceAt(src_, pos_, &ws_len)) {
        Advance(pos_ + ws_len);
      } else if (IsDigit(c)) {
        RS_RETURN_IF_ERROR(LexNumber());
      } else if (IsNameStart(c)) {
        size_t end = pos_ + 1;
        while (end < src_.size() && IsNameChar(src_[end])) ++end;
        Emit(TokenType::kName, src_.substr(pos_, end - pos_));
        Advance(end);
      } else if (c == '\'' || c == '"') {
        RS_RETURN_IF_ERROR(LexString());
      } else {
        RS_RETURN_IF_ERROR(LexOperator(&balance));
      }
    }
  }

  Status LexOperator(std::vector<char>* balance) {
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        Emit(TokenType::kOperator, op);
        Advance(pos_ + 2);
        return Status::Ok();
      }
    }
    const char c = src_[pos_];
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
      return Fail("unexpected char " + PyReprString(std::string(1, c)));
    }
    if (c == '(' || c == '[' || c == '{') {
      balance->push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance->empty()) return Fail(std::string("unexpected '") + c + "'");
      if (balance->back() != c) return Fail(std::string("unexpected '") + c + "', expected '" + balance->back() + "'");
      balance->pop_back();
    }
    Emit(TokenType::kOperator, std::string(1, c));
    Advance(pos_ + 1);
    return Status::Ok();
  }

  Status LexNumber() {
    const std::string_view s(src_);
    // Integers with a base prefix.
    if (s[pos_] == '0' && pos_ + 1 < s.size() &&
        std::string_view("xXoObB").find(s[pos_ + 1]) != std::string_view::npos) {
      const int base = (s[pos_ + 1] | 0x20) == 'x' ? 16 : (s[pos_ + 1] | 0x20) == 'o' ? 8 : 2;
      size_t p = pos_ + 2;
      std::string digits;
      while (p < s.size() && (s[p] == '_' || (HexValue(s[p]) >= 0 && HexValue(s[p]) < base))) {
        if (s[p] != '_') digits.push_back(s[p]);
        ++p;
      }
      if (digits.empty()) return Fail("invalid integer literal");
      return EmitInteger(digits, base, p);
    }
    size_t p = ScanDigits(s, pos_);
    bool is_float = false;
    const bool after_dot = pos_ > 0 && s[pos_ - 1] == '.';  // "x.0.1" is two subscripts
    if (!after_dot && p < s.size() && s[p] == '.' && ScanDigits(s, p + 1) > p + 1) {
      p = ScanDigits(s, p + 1);
      is_float = true;
    }
    if (!after_dot && p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
      size_t q = p + 1;
      if (q < s.size() && (s[q] == '+' || s[q] == '-')) ++q;
      if (ScanDigits(s, q) > q) {
        p = ScanDigits(s, q);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos_; i < p; ++i) {
      if (s[i] != '_') text.push_back(s[i]);
    }
    if (!is_float) return EmitInteger(text, 10, p);
    Token t{TokenType::kFloat, text, line_};
    t.float_value = std::strtod(text.c_str(), nullptr);
    out_.push_back(std::move(t));
    Advance(p);
    return Status::Ok();
  }

  Status EmitInteger(const std::string& digits, int base, size_t end) {
    errno = 0;
    char* stop = nullptr;
    const long long v = std::strtoll(digits.c_str(), &stop, base);
    if (errno == ERANGE) return Fail("integer literal " + digits + " does not fit in 64 bits");
    Token t{TokenType::kInteger, digits, line_};
    t.int_value = v;
    out_.push_back(std::move(t));
    Advance(end);
    return Status::Ok();
  }

  Status LexString() {
    const char quote = src_[pos_];
    size_t p = pos_ + 1;
    while (p < src_.size() && src_[p] != quote) p += (src_[p] == '\\') ? 2 : 1;
    if (p >= src_.size()) return Fail("unterminated string literal");
    std::string decoded;
    RS_RETURN_IF_ERROR(DecodeEscapes(std::string_view(src_).substr(pos_ + 1, p - pos_ - 1), &decoded));
    Emit(TokenType::kString, std::move(decoded));
    Advance(p + 1);
    return Status::Ok();
  }

  // Python's unicode-escape decoding of a literal's body.
  Status DecodeEscapes(std::string_view s, std::string* out) const {
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\' || i + 1 >= s.size()) {
        out->push_back(s[i]);
        continue;
      }
      const char e = s[++i];
      switch (e) {
        case '\n':
          break;  // line continuation
        case '\\':
        case '\'':
        case '"':
          out->push_back(e);
          break;
        case 'a':
          out->push_back('\a');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'v':
          out->push_back('\v');
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (size_t k = 1; k <= n; ++k) {
            const int h = i + k < s.size() ? HexValue(s[i + k]) : -1;
            if (h < 0) return Fail(std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(h);
          }
          if (cp > 0x10ffff) return Fail("illegal Unicode character in string literal");
          AppendUtf8(out, cp);
          i += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = e - '0';
            for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k) {
              cp = cp * 8 + static_cast<char32_t>(s[++i] - '0');
            }
            AppendUtf8(out, cp);
          } else if (e == 'N') {
            return Fail("\\N{...} escapes are not supported");
          } else {
            out->push_back('\\');  // unknown escapes keep their backslash
            out->push_back(e);
          }
      }
    }
    return Status::Ok();
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> out_;
};

// "\r\n" and "\r" -> "\n", then one trailing newline dropped (keep_trailing_newline=False).
std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view source) { return Lexer(NormalizeNewlines(source)).Run(); }

}  // namespace radixserve::jinja
