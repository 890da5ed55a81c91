#include "core/jinja/json.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/jinja/errors.h"
#include "core/jinja/py_string.h"

namespace radixserve::jinja {

namespace {

Result<Value> Convert(const nlohmann::ordered_json& j, uint32_t depth) {
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null:
    case T::discarded:
      return Value::None();
    case T::boolean:
      return Value::Bool(j.get<bool>());
    case T::number_integer:
      return Value::Int(j.get<int64_t>());
    case T::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case T::number_float:
      return Value::Float(j.get<double>());
    case T::string:
      return Value::Str(j.get<std::string>());
    case T::binary:
      return Status::InvalidArgument("binary JSON values have no Jinja equivalent");
    case T::array:
    case T::object:
      break;
  }
  if (depth >= kMaxNesting) {
    return LimitError("context values nest deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  if (j.is_array()) {
    std::vector<Value> items;
    items.reserve(j.size());
    for (const auto& e : j) {
      RS_ASSIGN_OR_RETURN(Value v, Convert(e, depth + 1));
      items.push_back(std::move(v));
    }
    return Value::List(std::move(items));
  }
  Dict dict;
  for (const auto& [key, e] : j.items()) {
    RS_ASSIGN_OR_RETURN(Value v, Convert(e, depth + 1));
    dict.Set(Value::Str(key), std::move(v));
  }
  return Value::FromDict(std::move(dict));
}

void AppendJsonString(std::string* out, std::string_view s, bool ensure_ascii) {
  out->push_back('"');
  for (size_t p = 0; p < s.size();) {
    const size_t start = p;
    const char32_t c = NextCodepoint(s, &p);
    char buf[16];
    switch (c) {
      case '"':
        *out += "\\\"";
        continue;
      case '\\':
        *out += "\\\\";
        continue;
      case '\n':
        *out += "\\n";
        continue;
      case '\r':
        *out += "\\r";
        continue;
      case '\t':
        *out += "\\t";
        continue;
      case '\b':
        *out += "\\b";
        continue;
      case '\f':
        *out += "\\f";
        continue;
      default:
        break;
    }
    if (c < 0x20 || (ensure_ascii && c > 0x7e)) {
      if (c >= 0x10000) {  // a surrogate pair, as Python writes it
        const char32_t v = c - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xd800 + (v >> 10)),
                      static_cast<unsigned>(0xdc00 + (v & 0x3ff)));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      }
      *out += buf;
    } else {
      out->append(s.substr(start, p - start));
    }
  }
  out->push_back('"');
}

Status NotSerializable(const Value& v) {
  return TypeError("Object of type " + v.TypeName() + " is not JSON serializable");
}

// A dict key as json.dumps converts it.
Result<std::string> KeyString(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString:
      return key.str();
    case Value::Kind::kBool:
      return std::string(key.as_bool() ? "true" : "false");
    case Value::Kind::kNone:
      return std::string("null");
    case Value::Kind::kInt:
      return std::to_string(key.as_int());
    case Value::Kind::kFloat:
      return PyFloatRepr(key.as_double());
    default:
      return TypeError("keys must be str, int, float, bool or None, not " + key.TypeName());
  }
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& o) : o_(o) {}

  Status Dump(const Value& v, int level) {
    using K = Value::Kind;
    switch (v.kind()) {
      case K::kNone:
        out_ += "null";
        return Status::Ok();
      case K::kBool:
        out_ += v.as_bool() ? "true" : "false";
        return Status::Ok();
      case K::kInt:
        out_ += std::to_string(v.as_int());
        return Status::Ok();
      case K::kFloat: {
        const double d = v.as_double();
        out_ += d != d                                          ? "NaN"
                : d == std::numeric_limits<double>::infinity()  ? "Infinity"
                : d == -std::numeric_limits<double>::infinity() ? "-Infinity"
                                                                : PyFloatRepr(d);
        return Status::Ok();
      }
      case K::kString:
        AppendJsonString(&out_, v.str(), o_.ensure_ascii);
        return Status::Ok();
      case K::kList: {
        const ListKind kind = v.list().kind;
        if (kind != ListKind::kList && kind != ListKind::kTuple) return NotSerializable(v);
        if (v.items().empty()) {
          out_ += "[]";
          return Status::Ok();
        }
        out_ += "[";
        for (size_t i = 0; i < v.items().size(); ++i) {
          RS_RETURN_IF_ERROR(Separator(i == 0, level + 1));
          RS_RETURN_IF_ERROR(Dump(v.items()[i], level + 1));
        }
        Close(level, ']');
        return Status::Ok();
      }
      case K::kDict:
        return DumpDict(v.dict(), level);
      default:
        return NotSerializable(v);
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  Status DumpDict(const Dict& dict, int level) {
    if (dict.size() == 0) {
      out_ += "{}";
      return Status::Ok();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [key, value] : dict.entries()) {
      if (o_.sort_keys && !key.is_string()) return TypeError("'<' not supported between instances of dict keys");
      RS_ASSIGN_OR_RETURN(std::string k, KeyString(key));
      entries.emplace_back(std::move(k), &value);
    }
    if (o_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out_ += "{";
    for (size_t i = 0; i < entries.size(); ++i) {
      RS_RETURN_IF_ERROR(Separator(i == 0, level + 1));
      AppendJsonString(&out_, entries[i].first, o_.ensure_ascii);
      out_ += o_.key_separator;
      RS_RETURN_IF_ERROR(Dump(*entries[i].second, level + 1));
    }
    Close(level, '}');
    return Status::Ok();
  }

  // Checked before each item: an indent repeats per level and lists can share a value many times.
  Status Separator(bool first, int level) {
    if (out_.size() > o_.max_bytes) {
      return LimitError("tojson output would exceed " + std::to_string(o_.max_bytes) + " bytes");
    }
    if (!first) out_ += o_.item_separator;
    if (o_.indent) {
      out_ += '\n';
      for (int i = 0; i < level; ++i) out_ += *o_.indent;
    }
    return Status::Ok();
  }

  void Close(int level, char bracket) {
    if (o_.indent) {
      out_ += '\n';
      for (int i = 0; i < level; ++i) out_ += *o_.indent;
    }
    out_ += bracket;
  }

  const JsonDumpOptions& o_;
  std::string out_;
};

}  // namespace

Status CheckNesting(const Value& v) {
  if (v.Depth() <= kMaxNesting) return Status::Ok();
  return LimitError("lists and dicts nest deeper than " + std::to_string(kMaxNesting) + " levels");
}

Result<Value> FromJson(const nlohmann::ordered_json& json) { return Convert(json, 0); }

Result<std::string> JsonDumps(const Value& value, const JsonDumpOptions& options) {
  Dumper dumper(options);
  RS_RETURN_IF_ERROR(dumper.Dump(value, 0));
  std::string out = dumper.Take();
  if (out.size() > options.max_bytes) {
    return LimitError("tojson output would exceed " + std::to_string(options.max_bytes) + " bytes");
  }
  return out;
}

}  // namespace radixserve::jinja
