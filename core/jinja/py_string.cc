#include "core/jinja/py_string.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace radixserve::jinja {

char32_t NextCodepoint(std::string_view s, size_t* pos) {
  const auto b0 = static_cast<unsigned char>(s[*pos]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
  if (len == 1 || len == 0 || *pos + len > s.size()) {
    ++*pos;
    return b0;  // ASCII, or an invalid byte standing for itself
  }
  char32_t cp = b0 & (0x7f >> len);
  for (int i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[*pos + i]);
    if ((b >> 6) != 2) {
      ++*pos;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3f);
  }
  *pos += len;
  return cp;
}

void AppendUtf8(std::string* out, char32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

std::vector<std::string_view> Codepoints(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    NextCodepoint(s, &pos);
    out.push_back(s.substr(start, pos - start));
  }
  return out;
}

size_t CodepointCount(std::string_view s) {
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) NextCodepoint(s, &pos);
  return n;
}

bool IsPyWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  std::vector<char32_t> set;
  if (chars) {
    for (size_t p = 0; p < chars->size();) set.push_back(NextCodepoint(*chars, &p));
  }
  auto strippable = [&](char32_t c) {
    if (!chars) return IsPyWhitespace(c);
    for (char32_t x : set) {
      if (x == c) return true;
    }
    return false;
  };
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      size_t p = begin;
      if (!strippable(NextCodepoint(s, &p))) break;
      begin = p;
    }
  }
  if (right) {
    std::vector<size_t> starts;  // code point boundaries of what the left strip kept
    for (size_t p = begin; p < end;) {
      starts.push_back(p);
      NextCodepoint(s, &p);
    }
    while (!starts.empty()) {
      size_t p = starts.back();
      if (!strippable(NextCodepoint(s, &p))) break;
      end = starts.back();
      starts.pop_back();
    }
  }
  return std::string(s.substr(begin, end - begin));
}

std::vector<std::string> PySplit(std::string_view s, std::string_view sep, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t hit = s.find(sep, pos);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  out.emplace_back(s.substr(pos));
  return out;
}

std::vector<std::string> PyRSplit(std::string_view s, std::string_view sep, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t end = s.size();
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep.size()) break;
    const size_t hit = s.rfind(sep, end - sep.size());
    if (hit == std::string_view::npos) break;
    out.emplace(out.begin(), s.substr(hit + sep.size(), end - hit - sep.size()));
    end = hit;
  }
  out.emplace(out.begin(), s.substr(0, end));
  return out;
}

std::vector<std::string> PySplitWhitespace(std::string_view s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t p = pos;
    if (IsPyWhitespace(NextCodepoint(s, &p))) {
      pos = p;
      continue;
    }
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      out.emplace_back(s.substr(pos));  // the rest, trailing whitespace included, as Python does
      return out;
    }
    size_t end = pos;
    while (end < s.size()) {
      size_t q = end;
      if (IsPyWhitespace(NextCodepoint(s, &q))) break;
      end = q;
    }
    out.emplace_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::vector<std::string> PySplitLines(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0, pos = 0;
  while (pos < s.size()) {
    const size_t at = pos;
    const char32_t c = NextCodepoint(s, &pos);
    const bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e) || c == 0x85 ||
                     c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    out.emplace_back(s.substr(start, at - start));
    if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    start = pos;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

std::string PyReplace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts repl before every code point and at the end
    int64_t done = 0;
    for (std::string_view cp : Codepoints(s)) {
      if (count < 0 || done < count) out += repl, ++done;
      out += cp;
    }
    if (count < 0 || done < count) out += repl;
    return out;
  }
  size_t pos = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos)).append(repl);
    pos = hit + old.size();
  }
  out.append(s.substr(pos));
  return out;
}

namespace {

// Simple case pairs: returns the other case of c, or c when it has none.
char32_t ToLowerCp(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0xc0 && c <= 0xde && c != 0xd7) || (c >= 0x391 && c <= 0x3ab && c != 0x3a2) || (c >= 0x410 && c <= 0x42f))
    return c + 32;
  if (c >= 0x400 && c <= 0x40f) return c + 80;
  if (c == 0x178) return 0xff;
  if (c == 0x386) return 0x3ac;
  if (c >= 0x388 && c <= 0x38a) return c + 37;
  if (c == 0x38c) return 0x3cc;
  if (c == 0x38e || c == 0x38f) return c + 63;
  const bool even_upper = (c >= 0x100 && c <= 0x137 && c != 0x130 && c != 0x131) || (c >= 0x14a && c <= 0x177) ||
                          (c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x4bf);
  if (even_upper) return (c % 2 == 0) ? c + 1 : c;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e)) return (c % 2 == 1) ? c + 1 : c;
  return c;
}

char32_t ToUpperCp(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if ((c >= 0xe0 && c <= 0xfe && c != 0xf7) || (c >= 0x3b1 && c <= 0x3cb && c != 0x3c2) || (c >= 0x430 && c <= 0x44f))
    return c - 32;
  if (c == 0x3c2) return 0x3a3;
  if (c >= 0x450 && c <= 0x45f) return c - 80;
  if (c == 0xff) return 0x178;
  if (c == 0x131) return 'I';
  if (c == 0x17f) return 'S';
  if (c == 0x3ac) return 0x386;
  if (c >= 0x3ad && c <= 0x3af) return c - 37;
  if (c == 0x3cc) return 0x38c;
  if (c == 0x3cd || c == 0x3ce) return c - 63;
  const bool even_upper = (c >= 0x100 && c <= 0x137 && c != 0x130 && c != 0x131) || (c >= 0x14a && c <= 0x177) ||
                          (c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x4bf);
  if (even_upper) return (c % 2 == 1) ? c - 1 : c;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e)) return (c % 2 == 0) ? c - 1 : c;
  return c;
}

bool IsCased(char32_t c) { return ToLowerCp(c) != c || ToUpperCp(c) != c || c == 0xdf; }

void AppendUpper(std::string* out, char32_t c) {
  if (c == 0xdf) {  // ß has no single upper-case letter
    *out += "SS";
    return;
  }
  AppendUtf8(out, ToUpperCp(c));
}

}  // namespace

std::string PyLower(std::string_view s) {
  std::string out;
  for (size_t p = 0; p < s.size();) AppendUtf8(&out, ToLowerCp(NextCodepoint(s, &p)));
  return out;
}

std::string PyUpper(std::string_view s) {
  std::string out;
  for (size_t p = 0; p < s.size();) AppendUpper(&out, NextCodepoint(s, &p));
  return out;
}

std::string PyTitle(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    if (prev_cased) {
      AppendUtf8(&out, ToLowerCp(c));
    } else {
      AppendUpper(&out, c);
    }
    prev_cased = IsCased(c);
  }
  return out;
}

std::string PyCapitalize(std::string_view s) {
  std::string out;
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    if (out.empty()) {
      AppendUpper(&out, c);
    } else {
      AppendUtf8(&out, ToLowerCp(c));
    }
  }
  return out;
}

bool PyIsLower(std::string_view s) {
  bool cased = false;
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    if (ToLowerCp(c) != c) return false;
    cased = cased || IsCased(c);
  }
  return cased;
}

bool PyIsUpper(std::string_view s) {
  bool cased = false;
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    if (ToUpperCp(c) != c || c == 0xdf) return false;
    cased = cased || IsCased(c);
  }
  return cased;
}

namespace {

// Python's str.isprintable() for non-ASCII code points, approximated by the format, separator,
// control and private-use ranges (unassigned code points count as printable here).
bool IsPrintable(char32_t c) {
  if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0xa0) || c == 0xad) return false;
  if (c == 0x61c || c == 0x1680 || c == 0x180e || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
      (c >= 0x205f && c <= 0x206f) || c == 0x3000 || (c >= 0xd800 && c <= 0xf8ff) || c == 0xfeff ||
      (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff || (c >= 0xe0000 && c <= 0xe0fff) || c >= 0xf0000)
    return false;
  return true;
}

}  // namespace

std::string PyReprString(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    char buf[16];
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (IsPrintable(c)) {
      AppendUtf8(&out, c);
    } else {
      std::snprintf(buf, sizeof buf,
                    c < 0x100     ? "\\x%02x"
                    : c < 0x10000 ? "\\u%04x"
                                  : "\\U%08x",
                    static_cast<unsigned>(c));
      out += buf;
    }
  }
  out.push_back(quote);
  return out;
}

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // Shortest round-trip digits from to_chars, laid out the way Python's repr does.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char ch : sci.substr(0, e)) {
    if (ch != '.') digits.push_back(ch);
  }
  const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int ndigits = static_cast<int>(digits.size());
  const int decpt = exp + 1;  // position of the decimal point relative to the digits
  if (exp < -4 || exp >= 16) {
    out.push_back(digits[0]);
    if (ndigits > 1) out.append(".").append(digits, 1);
    std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += buf;
  } else if (decpt <= 0) {
    out.append("0.").append(static_cast<size_t>(-decpt), '0').append(digits);
  } else if (decpt >= ndigits) {
    out.append(digits).append(static_cast<size_t>(decpt - ndigits), '0').append(".0");
  } else {
    out.append(digits, 0, decpt).append(".").append(digits, decpt);
  }
  return out;
}

}  // namespace radixserve::jinja
