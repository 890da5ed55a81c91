// The api node's control plane: control calls fanned out to the scheduler
// groups (reads and changes on separate lanes) and merged, the admin calls,
// server info, cache flushes and the /metrics page.
#include "nodes/api/api_node.h"

#include <nlohmann/json.hpp>

#include "transport/control_channel.h"

namespace radixserve::nodes {

Result<control::ControlReply> ApiNode::Control(control::ControlRequest req) {
  auto timeout = std::chrono::milliseconds(params().GetInt("control_timeout_ms"));
  const bool read = req.body_case() == control::ControlRequest::kGetStats ||
                    req.body_case() == control::ControlRequest::kGetServerInfo ||
                    req.body_case() == control::ControlRequest::kListPlugins;
  RS_ASSIGN_OR_RETURN(auto replies, (read ? read_comm_ : change_comm_)->Call(std::move(req), timeout));
  control::ControlReply merged = transport::FanOutCommunicator::Merge(replies);
  if (data_parallel_ && read && merged.success()) merged.set_json(GroupsJson(replies));
  return merged;
}

std::string ApiNode::GroupsJson(const std::vector<control::ControlReply>& replies) const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& r : replies) {
    // A scheduler outside the default namespace answers as "ns/name" (scheduler_node.cc).
    const size_t slash = r.responder().find('/');
    const std::string group = slash == std::string::npos ? NodeContext{}.ns : r.responder().substr(0, slash);
    groups[group] = nlohmann::json::parse(r.json().empty() ? "{}" : r.json(), nullptr, false);
  }
  return nlohmann::json{{"groups", groups}, {"router", nlohmann::json::parse(router_->StatsJson())}}.dump();
}

Result<std::string> ApiNode::ServerInfoJson() {
  control::ControlRequest req;
  req.mutable_get_server_info();
  RS_ASSIGN_OR_RETURN(control::ControlReply reply, Control(req));
  nlohmann::json info = nlohmann::json::object();
  if (!reply.json().empty()) info = nlohmann::json::parse(reply.json(), nullptr, false);
  if (info.is_discarded()) info = nlohmann::json::object();
  info["api"] = {{"served_model_name", params().GetString("served_model_name")},
                 {"port", port()},
                 {"context_length", context_length_},
                 {"parameters", params().Snapshot()}};
  info["nodes"] = health_.Json(/*detailed=*/false);
  return info.dump();
}

Status ApiNode::FlushCache() {
  control::ControlRequest req;
  req.mutable_flush_cache();
  RS_ASSIGN_OR_RETURN(control::ControlReply reply, Control(req));
  if (!reply.success()) return Status::FailedPrecondition(reply.message());
  return Status::Ok();
}

Result<std::string> ApiNode::ControlJson(control::ControlRequest req) {
  RS_ASSIGN_OR_RETURN(control::ControlReply reply, Control(std::move(req)));
  if (!reply.success()) {
    // The scheduler's refusals carry their code: the caller's mistakes (unknown plugin, bad
    // parameter) are InvalidArgument, busy states FailedPrecondition.
    const auto code = static_cast<StatusCode>(reply.code());
    return Status(reply.code() > 0 && code <= StatusCode::kInternal ? code : StatusCode::kInvalidArgument,
                  reply.message());
  }
  nlohmann::json out = {{"success", true}, {"message", reply.message()}, {"responder", reply.responder()}};
  if (!reply.json().empty()) out["result"] = nlohmann::json::parse(reply.json(), nullptr, false);
  return out.dump();
}

Result<std::string> ApiNode::Admin(const api::AdminCall& call) {
  using Kind = api::AdminCall::Kind;
  auto plugin_spec = [&call](control::PluginSpec* spec) {
    spec->set_name(call.name);
    for (const auto& [k, v] : call.params) (*spec->mutable_params())[k] = v;
    spec->set_mode(call.mode);
  };
  auto scheduler_info = [this]() -> Result<nlohmann::json> {
    control::ControlRequest req;
    req.mutable_get_server_info();
    RS_ASSIGN_OR_RETURN(control::ControlReply reply, Control(req));
    auto info = nlohmann::json::parse(reply.json(), nullptr, false);
    if (info.is_discarded() || !(info.contains("scheduler") || info.contains("groups")))
      return Status::Unavailable("no scheduler answered");
    return info;
  };
  // One scheduler's figures, or {"groups": {ns: figures}} with data parallelism.
  auto per_scheduler = [](const nlohmann::json& info, const auto& pick) {
    if (!info.contains("groups")) return pick(info);
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [group, gi] : info["groups"].items()) out[group] = pick(gi);
    return nlohmann::json{{"groups", out}};
  };
  control::ControlRequest req;
  switch (call.kind) {
    case Kind::kListNodes:
      return nlohmann::json{{"nodes", health_.Json(/*detailed=*/true)}}.dump();
    case Kind::kShowPolicy: {
      RS_ASSIGN_OR_RETURN(nlohmann::json info, scheduler_info());
      nlohmann::json out = per_scheduler(info, [](const nlohmann::json& i) {
        return nlohmann::json{{"policy", i["scheduler"]["policy"]}, {"policy_stats", i["scheduler"]["policy_stats"]},
                              {"cache", i["scheduler"]["cache"]}};
      });
      if (info.contains("router")) out["routing"] = info["router"];
      return out.dump();
    }
    case Kind::kListPlugins:
      req.mutable_list_plugins();
      return ControlJson(req);
    case Kind::kSwapPolicy:
      plugin_spec(req.mutable_swap_policy());
      return ControlJson(req);
    case Kind::kSwapCache:
      plugin_spec(req.mutable_swap_cache());
      return ControlJson(req);
    case Kind::kFlushCache:
      req.mutable_flush_cache();
      return ControlJson(req);
    case Kind::kCacheStats:
      req.mutable_get_stats();
      return ControlJson(req);
    case Kind::kLoadPlugin:
      req.set_load_plugin(call.name);
      return ControlJson(req);
    case Kind::kGetParams:
    case Kind::kSetParam:
      if (call.node == name()) {  // this node's own parameters
        if (call.kind == Kind::kGetParams)
          return nlohmann::json{{"node", call.node}, {"parameters", params().Snapshot()}}.dump();
        RS_RETURN_IF_ERROR(SetParameter(call.name, call.value));
        return nlohmann::json{{"success", true}}.dump();
      }
      if (call.node == "scheduler") {
        if (call.kind == Kind::kGetParams) {
          RS_ASSIGN_OR_RETURN(nlohmann::json info, scheduler_info());
          nlohmann::json out = per_scheduler(
              info, [](const nlohmann::json& i) { return nlohmann::json{{"parameters", i["scheduler"]["parameters"]}}; });
          out["node"] = call.node;
          return out.dump();
        }
        req.mutable_set_parameter()->set_name(call.name);
        req.mutable_set_parameter()->set_value(call.value);
        return ControlJson(req);
      }
      return Status::NotFound("parameters of node '" + call.node +
                              "' are not reachable from the api node (try api or scheduler)");
  }
  return Status::Internal("unhandled admin call");
}

Result<std::string> ApiNode::MetricsText() {
  const std::string stats = scheduler_stats_.Get([this]() -> std::optional<std::string> {
    control::ControlRequest req;
    req.mutable_get_stats();
    auto reply = Control(req);
    if (!reply.ok() || !reply->success()) return std::nullopt;
    return reply->json();
  });
  return RenderMetrics(metrics_, server_->class_rejected(), stats);
}

}  // namespace radixserve::nodes
