#include "nodes/parameters.h"

#include <sstream>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace radixserve::nodes {

const char* ParamTypeName(ParamType t) {
  switch (t) {
    case ParamType::kInt: return "integer";
    case ParamType::kDouble: return "number";
    case ParamType::kBool: return "boolean";
    case ParamType::kString: return "string";
  }
  return "unknown";
}

void Parameters::Declare(ParamSpec spec) {
  std::lock_guard<std::mutex> l(mu_);
  values_[spec.name] = spec.default_value;
  specs_[spec.name] = std::move(spec);
}

void Parameters::DeclareInt(const std::string& name, int64_t def, std::optional<double> min,
                            std::optional<double> max, const std::string& description, bool read_only) {
  Declare({name, ParamType::kInt, def, min, max, {}, description, read_only});
}
void Parameters::DeclareDouble(const std::string& name, double def, std::optional<double> min,
                               std::optional<double> max, const std::string& description, bool read_only) {
  Declare({name, ParamType::kDouble, def, min, max, {}, description, read_only});
}
void Parameters::DeclareBool(const std::string& name, bool def, const std::string& description, bool read_only) {
  Declare({name, ParamType::kBool, def, std::nullopt, std::nullopt, {}, description, read_only});
}
void Parameters::DeclareString(const std::string& name, const std::string& def, const std::string& description,
                               std::vector<std::string> choices, bool read_only) {
  Declare({name, ParamType::kString, def, std::nullopt, std::nullopt, std::move(choices), description, read_only});
}

namespace {

Result<ParamValue> Parse(const ParamSpec& spec, const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("parameter '" + spec.name + "': " + why);
  };
  switch (spec.type) {
    case ParamType::kInt: {
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE) return bad("expected an integer, got '" + text + "'");
      if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max))
        return bad("value " + text + " is outside [" + (spec.min ? Parameters::ToText(int64_t(*spec.min)) : "-inf") +
                   ", " + (spec.max ? Parameters::ToText(int64_t(*spec.max)) : "inf") + "]");
      return ParamValue(static_cast<int64_t>(v));
    }
    case ParamType::kDouble: {
      errno = 0;
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        return bad("expected a finite number, got '" + text + "'");
      if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max))
        return bad("value " + text + " is outside [" + (spec.min ? std::to_string(*spec.min) : "-inf") + ", " +
                   (spec.max ? std::to_string(*spec.max) : "inf") + "]");
      return ParamValue(v);
    }
    case ParamType::kBool:
      if (text == "true" || text == "True" || text == "1") return ParamValue(true);
      if (text == "false" || text == "False" || text == "0") return ParamValue(false);
      return bad("expected true or false, got '" + text + "'");
    case ParamType::kString:
      if (!spec.choices.empty()) {
        bool found = false;
        std::string all;
        for (const auto& c : spec.choices) {
          found = found || c == text;
          all += (all.empty() ? "" : ", ") + c;
        }
        if (!found) return bad("'" + text + "' is not one of: " + all);
      }
      return ParamValue(text);
  }
  return bad("unknown type");
}

}  // namespace

Status Parameters::Set(const std::string& name, const std::string& text, bool locked) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = specs_.find(name);
  if (it == specs_.end()) {
    std::string known;
    for (const auto& [n, s] : specs_) known += (known.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown parameter '" + name + "' (known: " + known + ")");
  }
  if (locked && it->second.read_only)
    return Status::FailedPrecondition("parameter '" + name + "' is read-only while the node is configured");
  RS_ASSIGN_OR_RETURN(ParamValue v, Parse(it->second, text));
  values_[name] = std::move(v);
  return Status::Ok();
}

Status Parameters::SetAll(const std::vector<std::pair<std::string, std::string>>& values, bool locked) {
  for (const auto& [n, v] : values) RS_RETURN_IF_ERROR(Set(n, v, locked));
  return Status::Ok();
}

const ParamValue& Parameters::Value(const std::string& name, ParamType expected) const {
  auto it = specs_.find(name);
  if (it == specs_.end() || it->second.type != expected)
    throw std::logic_error("parameter '" + name + "' read as " + ParamTypeName(expected) + " but not declared so");
  return values_.at(name);
}

int64_t Parameters::GetInt(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  return std::get<int64_t>(Value(name, ParamType::kInt));
}
double Parameters::GetDouble(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  return std::get<double>(Value(name, ParamType::kDouble));
}
bool Parameters::GetBool(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  return std::get<bool>(Value(name, ParamType::kBool));
}
std::string Parameters::GetString(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  return std::get<std::string>(Value(name, ParamType::kString));
}

Result<std::string> Parameters::GetText(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = values_.find(name);
  if (it == values_.end()) return Status::NotFound("unknown parameter '" + name + "'");
  return ToText(it->second);
}

std::vector<ParamSpec> Parameters::Specs() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<ParamSpec> out;
  for (const auto& [n, s] : specs_) out.push_back(s);
  return out;
}

std::map<std::string, std::string> Parameters::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, std::string> out;
  for (const auto& [n, v] : values_) out[n] = ToText(v);
  return out;
}

std::string Parameters::ToText(const ParamValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", *d);
    return buf;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

Result<std::pair<std::string, std::string>> ParseAssignment(const std::string& text) {
  auto pos = text.find(":=");
  if (pos == std::string::npos || pos == 0)
    return Status::InvalidArgument("expected name:=value, got '" + text + "'");
  return std::make_pair(text.substr(0, pos), text.substr(pos + 2));
}

Result<std::map<std::string, std::string>> ParsePluginParams(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidArgument("plugin parameter '" + item + "' must be name=value");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace radixserve::nodes
