#include "core/tool_calls/parameter_value.h"

#include <cctype>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/tool_calls/marker_search.h"

namespace radixserve::tool_calls {
namespace {

// Ordered: keys keep the order the model wrote them in.
using json = nlohmann::ordered_json;

// JSON text spaced the way the templates print JSON (Python's json.dumps): ", " and ": ".
std::string Dump(const json& j) {
  if (j.is_object()) {
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) s += ", ";
      s += Dump(json(it.key())) + ": " + Dump(it.value());
    }
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); ++i) s += (i ? ", " : "") + Dump(j[i]);
    return s + "]";
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Reads a Python literal (what repr prints for dicts, lists, tuples, strings, numbers, booleans
// and None) into JSON. Recursion is bounded by the depth limit.
class PythonLiteralReader {
 public:
  explicit PythonLiteralReader(std::string_view text) : s_(text) {}

  // The value if `text` is exactly one literal (spaces around allowed).
  std::optional<json> ReadAll() {
    std::optional<json> v = Value(0);
    SkipSpace();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool EatWord(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    size_t after = i_ + w.size();
    if (after < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[after])) || s_[after] == '_')) return false;
    i_ = after;
    return true;
  }

  std::optional<json> Value(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    SkipSpace();
    if (i_ >= s_.size()) return std::nullopt;
    char c = s_[i_];
    if (c == '{') return Dict(depth);
    if (c == '[') return Sequence(depth, ']');
    if (c == '(') return Sequence(depth, ')');
    if (c == '\'' || c == '"') return String();
    if (EatWord("True")) return json(true);
    if (EatWord("False")) return json(false);
    if (EatWord("None")) return json(nullptr);
    return Number();
  }

  std::optional<json> Dict(int depth) {
    ++i_;  // '{'
    json obj = json::object();
    if (Eat('}')) return obj;
    while (true) {
      std::optional<json> key = Value(depth + 1);
      if (!key || !Eat(':')) return std::nullopt;
      std::optional<json> value = Value(depth + 1);
      if (!value) return std::nullopt;
      std::string k = key->is_string() ? key->get<std::string>() : Dump(*key);
      obj[k] = std::move(*value);
      if (Eat('}')) return obj;
      if (!Eat(',')) return std::nullopt;
      if (Eat('}')) return obj;  // trailing comma
    }
  }

  std::optional<json> Sequence(int depth, char close) {
    ++i_;  // '[' or '('
    json arr = json::array();
    if (Eat(close)) return arr;
    while (true) {
      std::optional<json> value = Value(depth + 1);
      if (!value) return std::nullopt;
      arr.push_back(std::move(*value));
      if (Eat(close)) return arr;
      if (!Eat(',')) return std::nullopt;
      if (Eat(close)) return arr;
    }
  }

  std::optional<json> String() {
    char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == quote) return json(std::move(out));
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return std::nullopt;
      char e = s_[i_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        default:  // kept as written: a backslash Python would keep, or an escape we do not decode
          out.push_back('\\');
          out.push_back(e);
      }
    }
    return std::nullopt;
  }

  std::optional<json> Number() {
    size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+' ||
                              s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
    }
    if (i_ == start) return std::nullopt;
    json j = json::parse(s_.substr(start, i_ - start), nullptr, false);
    if (j.is_discarded() || !j.is_number()) return std::nullopt;
    return j;
  }

  std::string_view s_;
  size_t i_ = 0;
};

std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace

std::string JsonString(std::string_view text) { return Dump(json(std::string(text))); }

std::string ParameterValueJson(std::string_view raw) {
  std::string_view t = Trim(raw);
  if (!t.empty()) {
    json j = json::parse(t, nullptr, false);
    if (!j.is_discarded()) return std::string(t);
    // Python's spellings: only whole literals, and only containers and the three keywords (a
    // quoted 'word' stays text with its quotes).
    if (t == "True" || t == "False" || t == "None" || t.front() == '{' || t.front() == '[' || t.front() == '(') {
      if (std::optional<json> v = PythonLiteralReader(t).ReadAll()) return Dump(*v);
    }
  }
  return JsonString(raw);
}

}  // namespace radixserve::tool_calls
