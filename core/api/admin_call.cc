#include "core/api/admin_call.h"

#include <nlohmann/json.hpp>

namespace radixserve::api {
namespace {

using Kind = AdminCall::Kind;

Status StringField(const nlohmann::json& args, const char* key, std::string* out) {
  if (!args.contains(key) || !args[key].is_string())
    return Status::InvalidArgument(std::string("field '") + key + "' (a string) is required");
  *out = args[key].get<std::string>();
  return Status::Ok();
}

Status PluginFields(const nlohmann::json& args, AdminCall* call) {
  RS_RETURN_IF_ERROR(StringField(args, "name", &call->name));
  if (args.contains("params")) {
    if (!args["params"].is_object()) return Status::InvalidArgument("field 'params' must be an object");
    for (auto& [k, v] : args["params"].items()) call->params[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  return Status::Ok();
}

}  // namespace

Result<AdminCall> ParseAdminCall(const std::string& method, const std::string& path, const std::string& body) {
  const bool post = method == "POST";
  nlohmann::json args = nlohmann::json::object();
  if (post && !body.empty()) {
    args = nlohmann::json::parse(body, nullptr, false);
    if (args.is_discarded() || !args.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  }
  AdminCall call;
  auto simple = [&](Kind kind) -> Result<AdminCall> {
    call.kind = kind;
    return call;
  };
  if (!post && path == "/admin/nodes") return simple(Kind::kListNodes);
  if (!post && path == "/admin/policy") return simple(Kind::kShowPolicy);
  if (!post && path == "/admin/plugins") return simple(Kind::kListPlugins);
  if (!post && path == "/admin/cache/stats") return simple(Kind::kCacheStats);
  if (post && path == "/admin/cache/flush") return simple(Kind::kFlushCache);
  if (post && path == "/admin/policy/swap") {
    call.kind = Kind::kSwapPolicy;
    RS_RETURN_IF_ERROR(PluginFields(args, &call));
    return call;
  }
  if (post && path == "/admin/cache/swap") {
    call.kind = Kind::kSwapCache;
    RS_RETURN_IF_ERROR(PluginFields(args, &call));
    if (args.contains("mode")) RS_RETURN_IF_ERROR(StringField(args, "mode", &call.mode));
    return call;
  }
  if (post && path == "/admin/plugin/load") {
    call.kind = Kind::kLoadPlugin;
    RS_RETURN_IF_ERROR(StringField(args, "path", &call.name));
    return call;
  }
  const std::string kParams = "/admin/params/";
  if (path.rfind(kParams, 0) == 0 && path.size() > kParams.size()) {
    call.node = path.substr(kParams.size());
    if (!post) return simple(Kind::kGetParams);
    call.kind = Kind::kSetParam;
    RS_RETURN_IF_ERROR(StringField(args, "name", &call.name));
    RS_RETURN_IF_ERROR(StringField(args, "value", &call.value));
    return call;
  }
  return Status::NotFound("no control endpoint " + method + " " + path);
}

}  // namespace radixserve::api
