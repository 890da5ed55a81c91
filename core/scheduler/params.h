// Typed plugin parameters: a schema (name, type, default, range) and the
// validated values a factory receives. Values travel as strings through the
// plugin C ABI and are parsed and range-checked here, so an unknown name or a
// bad value is refused before a plugin is created. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "core/scheduler/plugin_abi.h"
#include "core/util/status.h"

namespace radixserve::sched {

class Params {
 public:
  int64_t GetInt(const std::string& name) const;
  double GetDouble(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  const std::string& GetString(const std::string& name) const;
  void Set(const std::string& name, std::string value) { values_[name] = std::move(value); }
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// Fills *out with defaults overridden by `given`; refuses unknown names, unparsable values,
// and values outside [min_value, max_value] (for int and double).
Status ResolveParams(std::span<const RsParamSpec> schema, const std::map<std::string, std::string>& given,
                     Params* out);

}  // namespace radixserve::sched
