// The bridge between JSON and Jinja values: the render context comes in as JSON, and the
// `tojson` filter writes values back out exactly as Python's json.dumps does.
//
// Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/jinja/value.h"
#include "core/util/status.h"

namespace radixserve::jinja {

// Lists and dicts may nest at most this deep (in the context or built by a template); deeper
// values are refused so that walking or freeing them cannot exhaust the stack.
inline constexpr uint32_t kMaxNesting = 256;
// Fails (kResourceExhausted) for a value nested deeper than kMaxNesting.
Status CheckNesting(const Value& v);

// JSON -> Value: objects become dicts in key order, integers ints (an unsigned one beyond int64
// becomes a float), other numbers floats. Fails on nesting deeper than kMaxNesting.
Result<Value> FromJson(const nlohmann::ordered_json& json);

// json.dumps(value, ensure_ascii, indent, separators, sort_keys). indent: nullopt = None (one
// line), otherwise the string repeated per level (Python's int indent n is n spaces).
struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;
  std::string item_separator = ", ";  // Python's default; "," when an indent is given
  std::string key_separator = ": ";
  bool sort_keys = false;
  size_t max_bytes = SIZE_MAX;  // longer output fails with kResourceExhausted
};
// Fails with Python's TypeError wording for values JSON cannot hold (Undefined, namespaces,
// callables, dict views) and for dict keys that are not str, int, float, bool or None.
Result<std::string> JsonDumps(const Value& value, const JsonDumpOptions& options);

}  // namespace radixserve::jinja
