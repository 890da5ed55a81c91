// The member `key` of a JSON object when it is present and not null, else nullptr: how the
// request parsers read optional fields (OpenAI treats an explicit null as absent).
// Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace radixserve::api {

inline const nlohmann::json* JsonMember(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace radixserve::api
