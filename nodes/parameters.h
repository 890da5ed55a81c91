// Parameters: a node's typed, validated settings (ROS 2 style).
//
// A node declares each parameter (type, default, range, description) in its
// constructor; values arrive as text from a launch file or the command line
// ("name:=value") and are checked against the declaration. An undeclared
// name, a value of the wrong type or out of range is an error that names the
// parameter. Thread-safe: Get/Set may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/util/status.h"

namespace radixserve::nodes {

enum class ParamType { kInt, kDouble, kBool, kString };
const char* ParamTypeName(ParamType t);

using ParamValue = std::variant<int64_t, double, bool, std::string>;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kString;
  ParamValue default_value;
  std::optional<double> min, max;  // numbers only
  std::vector<std::string> choices;  // strings only; empty = any
  std::string description;
  bool read_only = false;  // only settable before configure (e.g. the model path)
};

class Parameters {
 public:
  void DeclareInt(const std::string& name, int64_t def, std::optional<double> min, std::optional<double> max,
                  const std::string& description, bool read_only = false);
  void DeclareDouble(const std::string& name, double def, std::optional<double> min, std::optional<double> max,
                     const std::string& description, bool read_only = false);
  void DeclareBool(const std::string& name, bool def, const std::string& description, bool read_only = false);
  void DeclareString(const std::string& name, const std::string& def, const std::string& description,
                     std::vector<std::string> choices = {}, bool read_only = false);

  // Parses `text` by the declared type and stores it. `locked` refuses read-only parameters.
  Status Set(const std::string& name, const std::string& text, bool locked = false);
  // Applies "name:=value" overrides in order; stops at the first error.
  Status SetAll(const std::vector<std::pair<std::string, std::string>>& values, bool locked = false);

  int64_t GetInt(const std::string& name) const;
  double GetDouble(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  std::string GetString(const std::string& name) const;
  // The value as text, or NotFound.
  Result<std::string> GetText(const std::string& name) const;

  std::vector<ParamSpec> Specs() const;
  // name -> current value text, for server info and `ctl param list`.
  std::map<std::string, std::string> Snapshot() const;

  static std::string ToText(const ParamValue& v);

 private:
  void Declare(ParamSpec spec);
  const ParamValue& Value(const std::string& name, ParamType expected) const;

  mutable std::mutex mu_;
  std::map<std::string, ParamSpec> specs_;
  std::map<std::string, ParamValue> values_;
};

// Splits "name:=value" (the ROS 2 spelling); InvalidArgument when there is no ":=".
Result<std::pair<std::string, std::string>> ParseAssignment(const std::string& text);
// A plugin's parameters as one node parameter: "a=1,b=x" -> {a: 1, b: x}.
Result<std::map<std::string, std::string>> ParsePluginParams(const std::string& text);

}  // namespace radixserve::nodes
