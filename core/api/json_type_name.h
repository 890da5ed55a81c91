// The JSON type of a value as an error message names it ("string", "integer", ...).
// Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace radixserve::api {

inline const char* JsonTypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number";
    default: return "value";
  }
}

}  // namespace radixserve::api
