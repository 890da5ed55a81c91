#include "core/api/tool_request.h"

#include <set>

#include "core/api/json_depth.h"
#include "core/api/json_member.h"
#include "core/api/json_type_name.h"

namespace radixserve::api {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

bool Fail(const std::string& field, const std::string& message, ApiError* error) {
  *error = ApiError::BadRequest(field, field + ": " + message);
  return false;
}

bool Expected(const std::string& field, const char* what, const json& got, ApiError* error) {
  return Fail(field, std::string("expected ") + what + ", got " + JsonTypeName(got), error);
}


// OpenAI's rule for function names; it also keeps names safe inside every family's call markup.
bool ValidFunctionName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// A {"type": "function", "function": {"name": N}} reference to one of the tools.
bool ReadFunctionRef(const json& v, const std::string& field, const std::set<std::string>& names, std::string* out,
                     ApiError* error) {
  if (!v.is_object()) return Expected(field, "an object", v, error);
  const json* type = JsonMember(v, "type");
  if (!type || !type->is_string() || type->get_ref<const std::string&>() != "function")
    return Fail(field + ".type", "expected \"function\"", error);
  const json* fn = JsonMember(v, "function");
  if (!fn || !fn->is_object()) return Fail(field + ".function", "expected an object with a \"name\"", error);
  const json* name = JsonMember(*fn, "name");
  if (!name || !name->is_string()) return Fail(field + ".function.name", "expected a string", error);
  *out = name->get<std::string>();
  if (!names.count(*out)) return Fail(field + ".function.name", "names no function of tools: \"" + *out + "\"", error);
  return true;
}

bool ReadToolChoice(const json& v, const std::set<std::string>& names, ToolChoice* out, ApiError* error) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "auto") out->mode = ToolChoice::Mode::kAuto;
    else if (s == "none") out->mode = ToolChoice::Mode::kNone;
    else if (s == "required") out->mode = ToolChoice::Mode::kRequired;
    else return Fail("tool_choice", "expected \"auto\", \"none\", \"required\" or an object, got \"" + s + "\"", error);
    return true;
  }
  if (!v.is_object()) return Expected("tool_choice", "a string or an object", v, error);
  const json* type = JsonMember(v, "type");
  if (!type || !type->is_string())
    return Fail("tool_choice.type", "expected \"function\" or \"allowed_tools\"", error);
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "function") {
    out->mode = ToolChoice::Mode::kRequired;
    out->allowed.resize(1);
    return ReadFunctionRef(v, "tool_choice", names, &out->allowed[0], error);
  }
  if (t != "allowed_tools")
    return Fail("tool_choice.type", "expected \"function\" or \"allowed_tools\", got \"" + t + "\"", error);
  const json* at = JsonMember(v, "allowed_tools");
  if (!at || !at->is_object()) return Fail("tool_choice.allowed_tools", "expected an object", error);
  const json* mode = JsonMember(*at, "mode");
  if (!mode || !mode->is_string() ||
      (mode->get_ref<const std::string&>() != "auto" && mode->get_ref<const std::string&>() != "required"))
    return Fail("tool_choice.allowed_tools.mode", "expected \"auto\" or \"required\"", error);
  out->mode = mode->get_ref<const std::string&>() == "auto" ? ToolChoice::Mode::kAuto : ToolChoice::Mode::kRequired;
  const json* list = JsonMember(*at, "tools");
  if (!list || !list->is_array() || list->empty())
    return Fail("tool_choice.allowed_tools.tools", "expected a non-empty array of function references", error);
  for (size_t i = 0; i < list->size(); ++i) {
    std::string name;
    if (!ReadFunctionRef((*list)[i], "tool_choice.allowed_tools.tools[" + std::to_string(i) + "]", names, &name,
                         error))
      return false;
    out->allowed.push_back(std::move(name));
  }
  return true;
}

// A call's arguments as the template sees them: the JSON value of the client's string (or the
// object some clients send), keys in the order written.
bool ReadArguments(const json& v, const std::string& field, const ApiLimits& limits, ordered_json* out,
                   ApiError* error) {
  if (v.is_object()) {
    *out = ordered_json::parse(v.dump());  // already parsed (sorted): the order written is gone
    return true;
  }
  if (!v.is_string()) return Expected(field, "a JSON text (string) or an object", v, error);
  const std::string& text = v.get_ref<const std::string&>();
  if (JsonDepth(text, limits.max_json_depth) > limits.max_json_depth)
    return Fail(field, "nests arrays/objects deeper than " + std::to_string(limits.max_json_depth) + " levels", error);
  *out = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return Fail(field, "is not valid JSON", error);
  if (!out->is_object()) return Fail(field, "expected a JSON object", error);
  return true;
}

}  // namespace

bool ParseToolFields(std::string_view body, const json& root, const ApiLimits& limits, GenerateRequest* out,
                     ApiError* error) {
  std::set<std::string> names;
  if (const json* tools = JsonMember(root, "tools")) {
    if (!tools->is_array()) return Expected("tools", "an array of tools", *tools, error);
    if (tools->size() > static_cast<size_t>(limits.max_tools))
      return Fail("tools", "at most " + std::to_string(limits.max_tools) + " tools allowed, got " +
                               std::to_string(tools->size()),
                  error);
    for (size_t i = 0; i < tools->size(); ++i) {
      const json& tool = (*tools)[i];
      const std::string field = "tools[" + std::to_string(i) + "]";
      if (!tool.is_object()) return Expected(field, "an object", tool, error);
      const json* type = JsonMember(tool, "type");
      if (!type || !type->is_string()) return Fail(field + ".type", "expected \"function\"", error);
      if (type->get_ref<const std::string&>() != "function")
        return Fail(field + ".type", "only \"function\" tools are supported, got \"" +
                                         type->get_ref<const std::string&>() + "\"",
                    error);
      const json* fn = JsonMember(tool, "function");
      if (!fn || !fn->is_object()) return Fail(field + ".function", "expected an object", error);
      const json* name = JsonMember(*fn, "name");
      if (!name || !name->is_string()) return Fail(field + ".function.name", "expected a string", error);
      const std::string& n = name->get_ref<const std::string&>();
      if (!ValidFunctionName(n))
        return Fail(field + ".function.name", "must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -, got \"" +
                                                  n.substr(0, 80) + "\"",
                    error);
      if (!names.insert(n).second) return Fail(field + ".function.name", "repeats the name \"" + n + "\"", error);
      if (const json* d = JsonMember(*fn, "description"); d && !d->is_string())
        return Expected(field + ".function.description", "a string", *d, error);
      if (const json* p = JsonMember(*fn, "parameters"); p && !p->is_object())
        return Expected(field + ".function.parameters", "a JSON schema object", *p, error);
      if (const json* s = JsonMember(*fn, "strict"); s && !s->is_boolean())
        return Expected(field + ".function.strict", "a boolean", *s, error);
    }
    if (!tools->empty()) {
      // The parse above sorted keys; the template and the schemas need them as written.
      ordered_json ordered = ordered_json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
      if (ordered.is_discarded() || !ordered.contains("tools")) return Fail("tools", "cannot be re-read", error);
      out->tools = std::move(ordered["tools"]);
    }
  }
  if (const json* choice = JsonMember(root, "tool_choice")) {
    if (!ReadToolChoice(*choice, names, &out->tool_choice, error)) return false;
    if (names.empty() && out->tool_choice.mode != ToolChoice::Mode::kNone)
      return Fail("tool_choice", "needs tools: the request has none", error);
  }
  if (const json* p = JsonMember(root, "parallel_tool_calls")) {
    if (!p->is_boolean()) return Expected("parallel_tool_calls", "a boolean", *p, error);
    out->parallel_tool_calls = p->get<bool>();
  }
  return true;
}

bool ParseMessageToolFields(const json& m, const std::string& field, const ApiLimits& limits, ChatMessage* msg,
                            ApiError* error) {
  if (const json* name = JsonMember(m, "name")) {
    if (!name->is_string()) return Expected(field + ".name", "a string", *name, error);
    msg->name = name->get<std::string>();
  }
  const json* calls = JsonMember(m, "tool_calls");
  if (calls && msg->role != "assistant")
    return Fail(field + ".tool_calls", "only assistant messages carry tool calls", error);
  if (calls) {
    if (!calls->is_array()) return Expected(field + ".tool_calls", "an array of tool calls", *calls, error);
    for (size_t k = 0; k < calls->size(); ++k) {
      const json& c = (*calls)[k];
      const std::string cf = field + ".tool_calls[" + std::to_string(k) + "]";
      if (!c.is_object()) return Expected(cf, "an object", c, error);
      ChatToolCall call;
      if (const json* id = JsonMember(c, "id")) {
        if (!id->is_string()) return Expected(cf + ".id", "a string", *id, error);
        call.id = id->get<std::string>();
      }
      if (const json* type = JsonMember(c, "type");
          type && (!type->is_string() || type->get_ref<const std::string&>() != "function"))
        return Fail(cf + ".type", "expected \"function\"", error);
      const json* fn = JsonMember(c, "function");
      if (!fn || !fn->is_object()) return Fail(cf + ".function", "expected an object with name and arguments", error);
      const json* name = JsonMember(*fn, "name");
      if (!name || !name->is_string()) return Fail(cf + ".function.name", "expected a string", error);
      call.name = name->get<std::string>();
      const json* args = JsonMember(*fn, "arguments");
      if (!args) return Fail(cf + ".function.arguments", "is required", error);
      if (!ReadArguments(*args, cf + ".function.arguments", limits, &call.arguments, error)) return false;
      msg->tool_calls.push_back(std::move(call));
    }
  }
  const json* id = JsonMember(m, "tool_call_id");
  if (msg->role == "tool") {
    if (!id) return Fail(field + ".tool_call_id", "is required in a tool message", error);
    if (!id->is_string()) return Expected(field + ".tool_call_id", "a string", *id, error);
    msg->tool_call_id = id->get<std::string>();
  } else if (id) {
    return Fail(field + ".tool_call_id", "only tool messages answer a tool call", error);
  }
  return true;
}

std::vector<std::string> CallableToolNames(const GenerateRequest& request) {
  if (!request.tool_choice.allowed.empty()) return request.tool_choice.allowed;
  std::vector<std::string> names;
  if (request.tools.is_array())
    for (const auto& t : request.tools) names.push_back(t["function"]["name"].get<std::string>());
  return names;
}

}  // namespace radixserve::api
