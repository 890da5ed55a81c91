#include "launch/substitution.h"

#include <cstdlib>

namespace radixserve::launch {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "word rest" at the first run of blanks.
std::pair<std::string_view, std::string_view> SplitWord(std::string_view s) {
  s = Trim(s);
  size_t sp = s.find_first_of(" \t");
  if (sp == std::string_view::npos) return {s, {}};
  return {s.substr(0, sp), Trim(s.substr(sp))};
}

Result<std::string> Expand(std::string_view body, const ArgValues& args) {
  auto [kind, rest] = SplitWord(body);
  if (kind == "var") {
    auto [name, extra] = SplitWord(rest);
    if (name.empty()) return Status::InvalidArgument("$(var) needs an argument name");
    if (!extra.empty()) return Status::InvalidArgument("$(var " + std::string(rest) + ") takes one name");
    auto it = args.find(std::string(name));
    if (it == args.end()) return Status::NotFound("undefined launch argument '" + std::string(name) + "' in $(var " +
                                                  std::string(name) + ")");
    return it->second;
  }
  if (kind == "env") {
    auto [name, fallback] = SplitWord(rest);
    if (name.empty()) return Status::InvalidArgument("$(env) needs a variable name");
    if (const char* v = std::getenv(std::string(name).c_str())) return std::string(v);
    if (!fallback.empty()) return std::string(fallback);
    return Status::NotFound("environment variable '" + std::string(name) +
                            "' is not set (give a default: $(env " + std::string(name) + " DEFAULT))");
  }
  return Status::InvalidArgument("unknown substitution '$(" + std::string(body) + ")' (expected $(var NAME) or "
                                 "$(env NAME [DEFAULT]))");
}

}  // namespace

Result<std::string> Substitute(std::string_view text, const ArgValues& args) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find("$(", pos);
    if (start == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, start - pos));
    size_t close = text.find(')', start + 2);
    if (close == std::string_view::npos)
      return Status::InvalidArgument("unclosed substitution '" + std::string(text.substr(start)) + "'");
    RS_ASSIGN_OR_RETURN(std::string value, Expand(text.substr(start + 2, close - start - 2), args));
    out += value;
    pos = close + 1;
  }
  return out;
}

}  // namespace radixserve::launch
