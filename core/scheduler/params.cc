#include "core/scheduler/params.h"

#include <glog/logging.h>

#include <charconv>
#include <cstdlib>

namespace radixserve::sched {
namespace {

bool ParseInt(const std::string& s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}
bool ParseDouble(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}
bool ParseBool(const std::string& s, bool* v) {
  if (s == "true" || s == "1") { *v = true; return true; }
  if (s == "false" || s == "0") { *v = false; return true; }
  return false;
}

Status Check(const RsParamSpec& spec, const std::string& value) {
  const std::string where = std::string("parameter '") + spec.name + "' = '" + value + "'";
  switch (spec.type) {
    case RS_PARAM_INT: {
      int64_t v;
      if (!ParseInt(value, &v)) return Status::InvalidArgument(where + ": not an integer");
      if (v < spec.min_value || v > spec.max_value)
        return Status::OutOfRange(where + ": outside [" + std::to_string(static_cast<int64_t>(spec.min_value)) +
                                  ", " + std::to_string(static_cast<int64_t>(spec.max_value)) + "]");
      return Status::Ok();
    }
    case RS_PARAM_DOUBLE: {
      double v;
      if (!ParseDouble(value, &v)) return Status::InvalidArgument(where + ": not a number");
      if (!(v >= spec.min_value && v <= spec.max_value))
        return Status::OutOfRange(where + ": outside [" + std::to_string(spec.min_value) + ", " +
                                  std::to_string(spec.max_value) + "]");
      return Status::Ok();
    }
    case RS_PARAM_BOOL: {
      bool v;
      if (!ParseBool(value, &v)) return Status::InvalidArgument(where + ": not true/false");
      return Status::Ok();
    }
    case RS_PARAM_STRING: return Status::Ok();
  }
  return Status::InvalidArgument(where + ": schema has an unknown type");
}

}  // namespace

int64_t Params::GetInt(const std::string& name) const {
  int64_t v = 0;
  CHECK(ParseInt(GetString(name), &v)) << name;
  return v;
}
double Params::GetDouble(const std::string& name) const {
  double v = 0;
  CHECK(ParseDouble(GetString(name), &v)) << name;
  return v;
}
bool Params::GetBool(const std::string& name) const {
  bool v = false;
  CHECK(ParseBool(GetString(name), &v)) << name;
  return v;
}
const std::string& Params::GetString(const std::string& name) const {
  auto it = values_.find(name);
  CHECK(it != values_.end()) << "parameter not in schema: " << name;
  return it->second;
}

Status ResolveParams(std::span<const RsParamSpec> schema, const std::map<std::string, std::string>& given,
                     Params* out) {
  *out = Params();
  for (const auto& [name, value] : given) {
    const RsParamSpec* spec = nullptr;
    for (const auto& s : schema)
      if (name == s.name) spec = &s;
    if (spec == nullptr) {
      std::string known;
      for (const auto& s : schema) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return Status::InvalidArgument("unknown parameter '" + name + "' (known: " + known + ")");
    }
    RS_RETURN_IF_ERROR(Check(*spec, value));
  }
  for (const auto& s : schema) {
    auto it = given.find(s.name);
    out->Set(s.name, it != given.end() ? it->second : std::string(s.default_value));
  }
  return Status::Ok();
}

}  // namespace radixserve::sched
