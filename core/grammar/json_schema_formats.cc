// JSON Schema formats as regular languages (see json_schema_formats.h).
#include "core/grammar/json_schema_formats.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace radixserve::grammar::internal {

namespace {

const std::string kHex = "[0-9a-fA-F]";
// A calendar date, year 0001..9999: month lengths exact, 29 February only in leap years.
const std::string kDate =
    "(?:(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-"
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29)";
// rfc3339-validator's time of day: hours 00-23, no leap second, a fraction, then Z or an offset.
const std::string kTime = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
const std::string kOctet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])";
const std::string kIpv4 = kOctet + "(?:\\." + kOctet + "){3}";

std::string Ipv6() {
  const std::string h = kHex + "{1,4}";
  std::string alts;
  auto add = [&](const std::string& a) {
    if (!alts.empty()) alts += "|";
    alts += a;
  };
  // Full forms: eight groups, or six and an IPv4 tail.
  add("(?:" + h + ":){7}" + h);
  add("(?:" + h + ":){6}" + kIpv4);
  // Compressed: `left::right` with left + right groups < 8 (a tail counts two).
  for (int tail_v4 = 0; tail_v4 < 2; ++tail_v4) {
    const int room = tail_v4 ? 5 : 7;  // groups the two sides may hold besides the tail
    for (int left = 0; left <= room; ++left) {
      const std::string l = left == 0 ? "" : "(?:" + h + ":){" + std::to_string(left - 1) + "}" + h;
      const int right_max = room - left;
      std::string r;
      if (tail_v4) {
        r = right_max == 0 ? kIpv4 : "(?:" + h + ":){0," + std::to_string(right_max) + "}" + kIpv4;
      } else {
        r = right_max == 0 ? "" : "(?:" + h + "(?::" + h + "){0," + std::to_string(right_max - 1) + "})?";
      }
      add(l + "::" + r);
    }
  }
  return "(?:" + alts + ")";
}

const std::string kLabel = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const std::string kPointer = "(?:/(?:[^~/]|~[01])*)*";

std::string DurationRegex() {
  const std::string n = "[0-9]+";
  const std::string sec = "[0-9]+(?:[.,][0-9]+)?S";
  const std::string date = "(?:" + n + "Y(?:" + n + "M)?(?:" + n + "W)?(?:" + n + "D)?|" + n + "M(?:" + n + "W)?(?:" + n +
                           "D)?|" + n + "W(?:" + n + "D)?|" + n + "D)";
  const std::string time = "(?:" + n + "H(?:" + n + "M)?(?:" + sec + ")?|" + n + "M(?:" + sec + ")?|" + sec + ")";
  return "P(?:" + date + "(?:T" + time + ")?|T" + time + ")";
}

}  // namespace

std::string FormatRegex(std::string_view f) {
  if (f == "date") return kDate;
  if (f == "time") return kTime;
  if (f == "date-time") return kDate + "[tT]" + kTime;
  if (f == "email" || f == "idn-email") return "[\\s\\S]*@[\\s\\S]*";
  if (f == "ipv4") return kIpv4;
  if (f == "ipv6") return Ipv6();
  if (f == "uuid") return kHex + "{8}-" + kHex + "{4}-" + kHex + "{4}-" + kHex + "{4}-" + kHex + "{12}";
  if (f == "hostname") return kLabel + "(?:\\." + kLabel + ")*";
  if (f == "duration") return DurationRegex();
  if (f == "uri") return "[A-Za-z][A-Za-z0-9+.-]*:\\S*";
  if (f == "uri-reference") return "\\S*";
  if (f == "json-pointer") return kPointer;
  if (f == "relative-json-pointer") return "(?:0|[1-9][0-9]*)(?:#|" + kPointer + ")";
  return "";
}

FormatKind ClassifyFormat(std::string_view f) {
  if (!FormatRegex(f).empty()) return FormatKind::kEnforced;
  if (f == "regex" || f == "idn-hostname" || f == "iri" || f == "iri-reference" || f == "uri-template")
    return FormatKind::kNotEnforced;
  return FormatKind::kAnnotation;
}

const CharDfa* FormatDfa(std::string_view f) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<CharDfa>, std::less<>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(f);
  if (it != cache.end()) return it->second.get();
  const std::string re = FormatRegex(f);
  std::unique_ptr<CharDfa> dfa;
  if (!re.empty()) {
    auto r = CharDfa::FromRegex(re, /*search=*/false, /*max_states=*/20000);
    if (r.ok()) dfa = std::make_unique<CharDfa>(std::move(r).value());
  }
  const CharDfa* out = dfa.get();
  cache.emplace(std::string(f), std::move(dfa));
  return out;
}

}  // namespace radixserve::grammar::internal
