#include "core/api/unsupported_fields.h"

#include <nlohmann/json.hpp>

#include <string>

#include "core/api/json_member.h"

namespace radixserve::api {
namespace {

using nlohmann::json;


bool Refuse(const std::string& field, const std::string& message, ApiError* error) {
  *error = ApiError::BadRequest(field, field + ": " + message);
  return false;
}

}  // namespace

bool CheckUnsupportedFields(const json& root, Endpoint endpoint, ApiError* error) {
  if (endpoint != Endpoint::kCompletions && endpoint != Endpoint::kChatCompletions) return true;
  // The legacy function-calling fields: tools and tool_choice replaced them (tool_request.h).
  // An empty list of functions and a function_call of "none" ask for nothing the server lacks.
  constexpr const char* kLegacy = "the deprecated functions API is not supported; use tools and tool_choice";
  if (const json* v = JsonMember(root, "functions"); v && !(v->is_array() && v->empty()))
    return Refuse("functions", kLegacy, error);
  if (const json* v = JsonMember(root, "function_call"); v && !(v->is_string() && v->get_ref<const std::string&>() == "none"))
    return Refuse("function_call", kLegacy, error);
  if (endpoint == Endpoint::kCompletions)
    for (const char* key : {"tools", "tool_choice", "parallel_tool_calls"})
      if (JsonMember(root, key)) return Refuse(key, "tool calls are made through /v1/chat/completions", error);

  if (const json* m = JsonMember(root, "modalities")) {
    if (!m->is_array()) return Refuse("modalities", "expected an array of strings", error);
    for (const json& v : *m)
      if (!v.is_string() || v.get_ref<const std::string&>() != "text")
        return Refuse("modalities", "only [\"text\"] output is supported, got " +
                                        v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 64),
                      error);
  }
  if (JsonMember(root, "audio")) return Refuse("audio", "audio output is not supported", error);

  if (const json* echo = JsonMember(root, "echo")) {
    if (!echo->is_boolean()) return Refuse("echo", "expected a boolean", error);
    if (echo->get<bool>()) return Refuse("echo", "is not supported", error);
  }
  if (const json* suffix = JsonMember(root, "suffix")) {
    if (!suffix->is_string()) return Refuse("suffix", "expected a string", error);
    if (!suffix->get_ref<const std::string&>().empty()) return Refuse("suffix", "is not supported", error);
  }
  return true;
}

}  // namespace radixserve::api
