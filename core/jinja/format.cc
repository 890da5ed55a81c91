#include "core/jinja/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "core/jinja/errors.h"
#include "core/jinja/py_string.h"

namespace radixserve::jinja {

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

namespace {

struct Spec {
  std::string flags;
  std::string width;
  std::string precision;  // with the leading '.'
  char conv = 0;
};

// printf of one number; widths and precisions were checked against the output limit.
template <typename T>
std::string Sprintf(const std::string& format, T value) {
  const int n = std::snprintf(nullptr, 0, format.c_str(), value);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  std::snprintf(out.data(), out.size() + 1, format.c_str(), value);
  return out;
}

// One conversion of PercentFormat.
Result<std::string> Convert(const Spec& spec, const Value& v, size_t max_bytes) {
  const std::string head = "%" + spec.flags + spec.width + spec.precision;
  const size_t width = spec.width.empty() ? 0 : std::strtoull(spec.width.c_str(), nullptr, 10);
  const size_t precision = spec.precision.size() > 1 ? std::strtoull(spec.precision.c_str() + 1, nullptr, 10) : 0;
  if (width > max_bytes || precision > max_bytes || spec.width.size() > 9 || spec.precision.size() > 10) {
    return LimitError("a format width or precision exceeds the output limit");
  }
  auto pad = [&](std::string text) {
    const size_t n = CodepointCount(text);
    if (n >= width) return text;
    const std::string fill(width - n, ' ');
    return spec.flags.find('-') != std::string::npos ? text + fill : fill + text;
  };
  switch (spec.conv) {
    case 's':
    case 'r':
    case 'a': {
      std::string text = spec.conv == 's' ? PyStr(v, max_bytes) : PyRepr(v, max_bytes);
      if (text.size() > max_bytes) return LimitError("a formatted value exceeds the output limit");
      if (!spec.precision.empty()) {
        const auto cps = Codepoints(text);
        if (cps.size() > precision) text = std::string(text.data(), cps[precision].data() - text.data());
      }
      return pad(std::move(text));
    }
    case 'c':
      if (v.is_string() && CodepointCount(v.str()) == 1) return pad(v.str());
      if (v.is_int() && v.as_int() >= 0 && v.as_int() <= 0x10ffff) {
        std::string s;
        AppendUtf8(&s, static_cast<char32_t>(v.as_int()));
        return pad(std::move(s));
      }
      return TypeError("%c requires an int or a unicode character, not " + v.TypeName());
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      const bool integral_only = spec.conv == 'x' || spec.conv == 'X' || spec.conv == 'o';
      if (!v.is_number() || (integral_only && v.is_float())) {
        return TypeError(std::string("%") + spec.conv + " format: " +
                         (integral_only ? "an integer is required, not " : "a real number is required, not ") +
                         v.TypeName());
      }
      const double d = v.as_double();
      if (v.is_float() && !(d > -9.2e18 && d < 9.2e18)) return Status::Unsupported("integer too large to format");
      const long long n = v.is_float() ? static_cast<long long>(std::trunc(d)) : v.as_int();
      const char conv = spec.conv == 'i' || spec.conv == 'u' ? 'd' : spec.conv;
      return Sprintf(head + "ll" + conv, n);
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      if (!v.is_number()) return TypeError(std::string("must be real number, not ") + v.TypeName());
      return Sprintf(head + spec.conv, v.as_double());
    default:
      return ValueError(std::string("unsupported format character '") + spec.conv + "'");
  }
}

}  // namespace

Result<Value> PercentFormat(std::string_view fmt, const Value& args, size_t max_bytes) {
  const bool tuple = args.is_list() && args.list().kind == ListKind::kTuple;
  const std::vector<Value> single{args};
  const std::vector<Value>& values = tuple ? args.items() : single;
  size_t next = 0;
  bool used_mapping = false;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) return ValueError("incomplete format");
    const Value* value = nullptr;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string_view::npos) return ValueError("incomplete format key");
      if (!args.is_dict()) return TypeError("format requires a mapping");
      value = args.dict().Find(fmt.substr(i + 1, close - i - 1));
      if (value == nullptr) return PyError("KeyError", PyReprString(fmt.substr(i + 1, close - i - 1)));
      used_mapping = true;
      i = close + 1;
    }
    Spec spec;
    while (i < fmt.size() && std::string_view("-+ 0#").find(fmt[i]) != std::string_view::npos) spec.flags += fmt[i++];
    while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') spec.width += fmt[i++];
    if (i < fmt.size() && fmt[i] == '.') {
      spec.precision += fmt[i++];
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') spec.precision += fmt[i++];
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) return ValueError("incomplete format");
    spec.conv = fmt[i];
    if (spec.conv == '%') {
      out.push_back('%');
      continue;
    }
    if (value == nullptr) {
      if (next >= values.size()) return TypeError("not enough arguments for format string");
      value = &values[next++];
    }
    RS_ASSIGN_OR_RETURN(std::string piece, Convert(spec, *value, max_bytes));
    out += piece;
    if (out.size() > max_bytes) return LimitError("a formatted string exceeds the output limit");
  }
  // Python skips this check for any argument with __getitem__ (dicts, lists, ranges), not tuples.
  const bool mapping_like =
      args.is_dict() ||
      (args.is_list() && (args.list().kind == ListKind::kList || args.list().kind == ListKind::kRange));
  if (!used_mapping && !mapping_like && next < values.size()) {
    return TypeError("not all arguments converted during string formatting");
  }
  return Value::Str(std::move(out));
}

namespace {

const char* const kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};

// ISO 8601 week-based year and week number.
void IsoWeek(const std::tm& tm, int* year, int* week) {
  const int wday = (tm.tm_wday + 6) % 7;  // Monday = 0
  *year = tm.tm_year + 1900;
  *week = (tm.tm_yday - wday + 10) / 7;
  auto weeks_in = [](int y) {
    auto p = [](int x) { return (x + x / 4 - x / 100 + x / 400) % 7; };
    return (p(y) == 4 || p(y - 1) == 3) ? 53 : 52;
  };
  if (*week < 1) {
    --*year;
    *week = weeks_in(*year);
  } else if (*week > weeks_in(*year)) {
    ++*year;
    *week = 1;
  }
}

}  // namespace

std::string Strftime(std::string_view fmt, std::chrono::system_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - secs).count();
  if (micros < 0) {
    micros += 1000000;
    secs -= std::chrono::seconds(1);
  }
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out.push_back(fmt[i]);
      continue;
    }
    const size_t start = i;
    char pad_flag = 0;  // '-': no padding, '_': spaces, '0': zeros
    if (fmt[i + 1] == '-' || fmt[i + 1] == '_' || fmt[i + 1] == '0') pad_flag = fmt[++i];
    if (i + 1 >= fmt.size()) {
      out.append(fmt.substr(start));
      break;
    }
    const char c = fmt[++i];
    auto num = [&](long value, int width, char fill) {
      if (pad_flag == '-') {
        width = 0;
      } else if (pad_flag == '_') {
        fill = ' ';
      } else if (pad_flag == '0') {
        fill = '0';
      }
      std::string digits = std::to_string(value);
      if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), fill);
      out += digits;
    };
    const int hour12 = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
    int iso_year, iso_week;
    IsoWeek(tm, &iso_year, &iso_week);
    switch (c) {
      case 'a':
        out.append(kDays[tm.tm_wday], 3);
        break;
      case 'A':
        out += kDays[tm.tm_wday];
        break;
      case 'b':
      case 'h':
        out.append(kMonths[tm.tm_mon], 3);
        break;
      case 'B':
        out += kMonths[tm.tm_mon];
        break;
      case 'c':
        out += Strftime("%a %b %e %H:%M:%S %Y", t);
        break;
      case 'C':
        num((tm.tm_year + 1900) / 100, 2, '0');
        break;
      case 'd':
        num(tm.tm_mday, 2, '0');
        break;
      case 'D':
        out += Strftime("%m/%d/%y", t);
        break;
      case 'e':
        num(tm.tm_mday, 2, ' ');
        break;
      case 'f':
        num(static_cast<long>(micros), 6, '0');
        break;
      case 'F':
        out += Strftime("%Y-%m-%d", t);
        break;
      case 'g':
        num(iso_year % 100, 2, '0');
        break;
      case 'G':
        num(iso_year, 1, '0');
        break;
      case 'H':
        num(tm.tm_hour, 2, '0');
        break;
      case 'I':
        num(hour12, 2, '0');
        break;
      case 'j':
        num(tm.tm_yday + 1, 3, '0');
        break;
      case 'k':
        num(tm.tm_hour, 2, ' ');
        break;
      case 'l':
        num(hour12, 2, ' ');
        break;
      case 'm':
        num(tm.tm_mon + 1, 2, '0');
        break;
      case 'M':
        num(tm.tm_min, 2, '0');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'p':
        out += tm.tm_hour < 12 ? "AM" : "PM";
        break;
      case 'P':
        out += tm.tm_hour < 12 ? "am" : "pm";
        break;
      case 'r':
        out += Strftime("%I:%M:%S %p", t);
        break;
      case 'R':
        out += Strftime("%H:%M", t);
        break;
      case 's':
        out += std::to_string(static_cast<long long>(tt));
        break;
      case 'S':
        num(tm.tm_sec, 2, '0');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'T':
      case 'X':
        out += Strftime("%H:%M:%S", t);
        break;
      case 'u':
        num(tm.tm_wday == 0 ? 7 : tm.tm_wday, 1, '0');
        break;
      case 'U':
        num((tm.tm_yday + 7 - tm.tm_wday) / 7, 2, '0');
        break;
      case 'V':
        num(iso_week, 2, '0');
        break;
      case 'w':
        num(tm.tm_wday, 1, '0');
        break;
      case 'W':
        num((tm.tm_yday + 7 - (tm.tm_wday + 6) % 7) / 7, 2, '0');
        break;
      case 'x':
        out += Strftime("%m/%d/%y", t);
        break;
      case 'y':
        num((tm.tm_year + 1900) % 100, 2, '0');
        break;
      case 'Y':
        num(tm.tm_year + 1900, 1, '0');
        break;
      case 'z':
      case 'Z':
        break;  // a naive datetime has no zone
      case '%':
        out.push_back('%');
        break;
      default:
        out.append(fmt.substr(start, i - start + 1));
    }
  }
  return out;
}

}  // namespace radixserve::jinja
