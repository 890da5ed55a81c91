#include "core/model/served_context.h"
#include "nodes/api/api_node.h"

#include "nodes/request_codec.h"

#include <glog/logging.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nodes/cache_event_codec.h"
#include "nodes/component.h"
#include "transport/control_channel.h"
#include "transport/messages.h"

namespace radixserve::nodes {

using transport::OutputEntry;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kNodeStatusFresh = std::chrono::seconds(3);

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

FinishReason ToFinishReason(const OutputEntry& e, std::span<const char> text) {
  std::string finish_text(text.data() + e.finish_text_offset, e.finish_text_len);
  switch (e.finish_kind > kMaxFinishKind ? FinishKind::kNone : static_cast<FinishKind>(e.finish_kind)) {
    case FinishKind::kMatchedToken: return FinishReason::Token(e.matched_token);
    case FinishKind::kMatchedStr: return FinishReason::Str(std::move(finish_text));
    case FinishKind::kLength: return FinishReason::Length(e.finish_length);
    case FinishKind::kAbort:
      return FinishReason::Abort(finish_text.empty() ? "request aborted" : finish_text,
                                 e.status_code > 0 ? e.status_code : 500);
    case FinishKind::kNone: break;
  }
  // Finished without a (known) reason: report it, never hang.
  return FinishReason::Abort("request ended without a finish reason", 500);
}
}  // namespace

ApiNode::ApiNode(NodeContext ctx) : Node(std::move(ctx)) {
  params().DeclareString("model", "", "GGUF file: tokenizer, chat template and context length", {}, true);
  params().DeclareString("host", "127.0.0.1", "address to bind (loopback unless opened up)", {}, true);
  params().DeclareInt("port", 30000, 0, 65535, "HTTP port (0: any free port)", true);
  params().DeclareInt("context", 0, 0, int64_t(1) << 30, "served context in tokens: 0 = the model's, at most 4096 (model::kDefaultServedContext)", true);
  params().DeclareString("api_key", "", "required as 'Authorization: Bearer <key>' when set", {}, true);
  params().DeclareString("admin_key", "", "required for /admin/* and /flush_cache when set", {}, true);
  params().DeclareString("served_model_name", "default", "model name clients use", {}, true);
  params().DeclareString("chat_template", "",
                         "the chat template instead of the GGUF's: a Jinja file's path, or a family name "
                         "(chatml, llama2, llama3, mistral, gemma, phi3, zephyr)",
                         {}, true);
  params().DeclareString("required_nodes", "scheduler,worker,detokenizer", "nodes that must be ready for /health", {},
                         true);
  params().DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
  params().DeclareInt("control_timeout_ms", 10000, 1, 600000, "how long a control call may take");
  params().DeclareInt("drain_timeout_s", 30, 0, 3600, "on shutdown, how long running requests may take to finish");
  params().DeclareInt("max_queued_requests", 1024, 1, 1 << 20,
                      "requests in flight through the api (n > 1 counts n); past it new ones get 503 + Retry-After");
  params().DeclareString("class_max_in_flight", "",
                         "per priority class: interactive=N,default=N,bulk=N in flight; past it 429 + Retry-After "
                         "for that class only (0 or absent: no limit)",
                         {}, true);
  params().DeclareString("dp_groups", "",
                         "data parallelism: namespaces of the scheduler groups requests are routed to, "
                         "comma-separated (empty: one group, in this node's namespace)",
                         {}, true);
  params().DeclareString("routing_policy", "cache-aware",
                         "routing plugin spreading requests over dp_groups: cache-aware, round-robin, shortest-queue "
                         "(can be changed while serving)");
  params().DeclareString("routing_params", "", "routing plugin parameters: name=value,name=value");
  params().DeclareString("plugin_dirs", "", "colon-separated routing plugin directories (default: next to the libraries)",
                         {}, true);
  params().DeclareString("tenant_keys", "",
                         "API keys of tenants with their cache salts: key=salt,key=salt (tenants never share cached "
                         "prefixes; accepted besides api_key)",
                         {}, true);
}

ApiNode::~ApiNode() { Shutdown(); }

bool ApiNode::Ready() const {
  if (state() != NodeState::kActive || draining_.load()) return false;  // /health answers 503 while draining
  std::lock_guard<std::mutex> l(nodes_mu_);
  const auto now = Clock::now();
  // With data parallelism one complete group can serve.
  for (int32_t g = 0; g < static_cast<int32_t>(groups_.size()); ++g)
    if (GroupReady(g, now)) return true;
  return false;
}

bool ApiNode::GroupReady(int32_t group, Clock::time_point now) const {
  for (const auto& name : required_nodes_) {
    auto it = nodes_.find(NodeKey(group, name));
    if (it == nodes_.end() || !it->second.ready || now - it->second.when > kNodeStatusFresh) return false;
  }
  return true;
}

std::string ApiNode::NodeKey(int32_t group, const std::string& name) const {
  return data_parallel_ ? groups_[static_cast<size_t>(group)].ns + "/" + name : name;
}

Status ApiNode::ConfigureGroup(const std::string& group_ns, const transport::ChannelOptions& opts) {
  Group g;
  g.ns = group_ns;
  RS_ASSIGN_OR_RETURN(g.requests, transport::Publisher::Create(ResolveTopicIn(group_ns, transport::topics::kRequests), opts));
  RS_ASSIGN_OR_RETURN(g.control, transport::Publisher::Create(ResolveTopicIn(group_ns, transport::topics::kControl), opts));
  RS_ASSIGN_OR_RETURN(g.str_out, transport::Subscriber::Create(ResolveTopicIn(group_ns, transport::topics::kStrOut), opts));
  RS_ASSIGN_OR_RETURN(g.control_reply,
                      transport::Subscriber::Create(ResolveTopicIn(group_ns, transport::topics::kControlReply), opts));
  transport::ChannelOptions lossy = opts;  // status and cache events never hold their publisher up
  lossy.block_when_full = false;
  RS_ASSIGN_OR_RETURN(g.node_status, transport::Subscriber::Create(ResolveTopicIn(group_ns, transport::topics::kNodeStatus), lossy));
  RS_RETURN_IF_ERROR(waiter_->Attach(*g.str_out));
  RS_RETURN_IF_ERROR(waiter_->Attach(*g.control_reply));
  RS_RETURN_IF_ERROR(waiter_->Attach(*g.node_status));
  // Only a router reads cache events: subscribing is what makes a scheduler send them.
  if (data_parallel_) {
    RS_ASSIGN_OR_RETURN(g.cache_events,
                        transport::Subscriber::Create(ResolveTopicIn(group_ns, transport::topics::kCacheEvents), lossy));
    RS_RETURN_IF_ERROR(waiter_->Attach(*g.cache_events));
  }
  groups_.push_back(std::move(g));
  return Status::Ok();
}

Result<router::RoutingPolicyPtr> ApiNode::LoadRoutingPolicy() {
  RS_ASSIGN_OR_RETURN(auto plugin_params, ParsePluginParams(params().GetString("routing_params")));
  return router::CreateRoutingPolicy(*plugins_, params().GetString("routing_policy"), plugin_params);
}

Status ApiNode::OnParameterChanged(const std::string& name) {
  if ((name != "routing_policy" && name != "routing_params") || router_ == nullptr) return Status::Ok();
  auto policy = LoadRoutingPolicy();
  // A plugin that cannot load (missing, wrong ABI, refused parameters) is the caller's mistake, and
  // the old policy stays.
  if (!policy.ok()) return Status::InvalidArgument(policy.status().message());
  const std::string old = router_->SwapPolicy(std::move(*policy));
  LOG(INFO) << this->name() << ": routing policy " << old << " -> " << params().GetString("routing_policy") << " ("
            << params().GetString("routing_params") << ")";
  return Status::Ok();
}

Status ApiNode::OnConfigure() {
  std::string path = params().GetString("model");
  if (path.empty()) return Status::InvalidArgument("parameter 'model' is required");
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(path));
  file_ = std::move(file);
  RS_ASSIGN_OR_RETURN(tokenizer_, Tokenizer::FromGguf(*file_));
  RS_ASSIGN_OR_RETURN(context_length_, model::ServedContext(*file_, params().GetInt("context")));
  required_nodes_ = SplitCommas(params().GetString("required_nodes"));

  const std::vector<std::string> dp = SplitCommas(params().GetString("dp_groups"));
  if (dp.size() > static_cast<size_t>(router::GroupCacheView::kMaxGroups))
    return Status::InvalidArgument("dp_groups names " + std::to_string(dp.size()) + " groups; at most " +
                                   std::to_string(router::GroupCacheView::kMaxGroups));
  for (size_t i = 0; i < dp.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (dp[i] == dp[j]) return Status::InvalidArgument("dp_groups names the group '" + dp[i] + "' twice");
  data_parallel_ = !dp.empty();

  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  groups_.clear();
  for (const std::string& group_ns : data_parallel_ ? dp : std::vector<std::string>{ns()})
    RS_RETURN_IF_ERROR(ConfigureGroup(group_ns, opts));
  if (data_parallel_) {
    std::vector<std::string> dirs;
    std::stringstream ss(params().GetString("plugin_dirs"));
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
    plugins_ = std::make_unique<sched::PluginHost>(dirs.empty() ? sched::PluginHost::DefaultDirs() : dirs);
    RS_ASSIGN_OR_RETURN(auto policy, LoadRoutingPolicy());
    router_ = std::make_unique<router::Router>(dp, std::move(policy));
  }
  // A control call goes to every group and waits for each one's reply.
  auto send = [this](const control::ControlRequest& r) {
    std::lock_guard<std::mutex> l(pub_mu_);
    for (Group& g : groups_) RS_RETURN_IF_ERROR(transport::PublishControl(*g.control, r));
    return Status::Ok();
  };
  const int fan_out = static_cast<int>(groups_.size());
  change_comm_ = std::make_unique<transport::FanOutCommunicator>(send, fan_out);
  read_comm_ = std::make_unique<transport::FanOutCommunicator>(send, fan_out, uint64_t(1) << 62);

  api::HttpServerOptions o;
  o.host = params().GetString("host");
  o.port = static_cast<int>(params().GetInt("port"));
  o.api_key = params().GetString("api_key");
  RS_ASSIGN_OR_RETURN(o.tenant_keys, api::ParseTenantKeys(params().GetString("tenant_keys")));
  RS_ASSIGN_OR_RETURN(o.class_max_in_flight, api::ParseClassLimits(params().GetString("class_max_in_flight")));
  o.admin_key = params().GetString("admin_key");
  o.served_model_name = params().GetString("served_model_name");
  o.chat_template_name = params().GetString("chat_template");
  if (auto t = file_->GetString("tokenizer.chat_template"); t.ok()) o.chat_template_text = *t;
  // The template's bos_token / eos_token are the vocabulary's.
  if (tokenizer_->bos_id() >= 0) o.chat_template_options.bos_token = std::string(tokenizer_->TokenText(tokenizer_->bos_id()));
  if (tokenizer_->eos_id() >= 0) o.chat_template_options.eos_token = std::string(tokenizer_->TokenText(tokenizer_->eos_id()));
  server_ = std::make_unique<api::HttpServer>(o, this);
  return Status::Ok();
}

Status ApiNode::OnActivate() {
  draining_.store(false);
  receiver_.Start(waiter_.get(), [this] { ReceiveLoop(); });
  Status s = server_->Start();
  if (!s.ok()) {
    receiver_.Stop();
    return s;
  }
  LOG(INFO) << name() << ": serving http://" << params().GetString("host") << ":" << server_->port();
  return Status::Ok();
}

Status ApiNode::OnDeactivate() {
  // Drain: refuse new requests, let running ones finish (up to drain_timeout_s), then close.
  draining_.store(true);
  auto deadline = Clock::now() + std::chrono::seconds(params().GetInt("drain_timeout_s"));
  size_t left = 0;
  int writing = 0;
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> l(mu_);
      left = pending_.size();
    }
    // A request's last output can be in while its stream is still being written to a slow client.
    writing = server_->active_requests();
    if (left == 0 && writing == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (left > 0 || writing > 0)
    LOG(WARNING) << name() << ": " << left << " requests still running and " << writing
                 << " answers still being written after the drain timeout";
  server_->Stop();  // aborts in-flight requests of closed connections
  receiver_.Stop();
  FailPending(-1, "the server is shutting down");
  return Status::Ok();
}

Status ApiNode::OnCleanup() {
  server_.reset();
  change_comm_.reset();
  read_comm_.reset();
  groups_.clear();  // before the waiter they are attached to
  router_.reset();
  plugins_.reset();  // after the router: its policy came from a plugin
  waiter_.reset();
  tokenizer_.reset();
  file_.reset();
  return Status::Ok();
}

// ---- ApiBackend -------------------------------------------------------------------

Result<std::vector<int32_t>> ApiNode::Tokenize(std::string_view text, bool add_special_tokens) {
  return tokenizer_->Encode(text, add_special_tokens, /*parse_special=*/!add_special_tokens);
}

Result<std::string> ApiNode::Detokenize(std::span<const int32_t> ids, bool skip_special_tokens) {
  for (int32_t id : ids)
    if (id < 0 || id >= tokenizer_->vocab_size())
      return Status::InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                     std::to_string(tokenizer_->vocab_size()) + ")");
  return tokenizer_->Decode(ids, skip_special_tokens);
}

Status ApiNode::Submit(const api::GenerateRequest& request, std::shared_ptr<api::ResponseSink> sink) {
  if (draining_.load()) return Status::Unavailable("the server is shutting down");
  // Read before taking mu_: the parameter store has its own lock.
  const int64_t max_queued = params().GetInt("max_queued_requests");
  router::Router::Ticket route{0, 0};  // without data parallelism: the one group, untracked
  if (data_parallel_) {
    std::array<bool, router::GroupCacheView::kMaxGroups> healthy{};
    {
      std::lock_guard<std::mutex> l(nodes_mu_);
      const auto now = Clock::now();
      for (int32_t g = 0; g < static_cast<int32_t>(groups_.size()); ++g) healthy[g] = GroupReady(g, now);
    }
    route = router_->Route({request.input_ids, request.cache_salt}, std::span<const bool>(healthy.data(), groups_.size()));
    if (route.group < 0) return Status::Unavailable("no data-parallel group is ready to serve; retry later");
  }
  const int32_t group = route.group;
  uint64_t rid = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (by_name_.count(request.rid)) {
      if (router_) router_->Finished(route);
      return Status::InvalidArgument("request id '" + request.rid + "' is already in use");
    }
    // A bounded queue: past the limit the client is told at once to come back (503, Retry-After).
    if (static_cast<int64_t>(pending_.size()) >= max_queued) {
      if (router_) router_->Finished(route);
      metrics_.requests_rejected_overload.fetch_add(1, std::memory_order_relaxed);
      return Status::Unavailable("the server is overloaded: " + std::to_string(pending_.size()) +
                                 " requests in flight (max_queued_requests); retry later");
    }
    metrics_.requests_in_flight.fetch_add(1, std::memory_order_relaxed);  // with the entry, before any output
    rid = next_rid_++;
    Pending p;
    p.cls = request.priority_class;
    p.rid = request.rid;
    p.sink = std::move(sink);
    p.start = p.last_token = Clock::now();
    p.return_logprob = request.return_logprob;
    p.group = group;
    p.route = route;
    pending_.emplace(rid, std::move(p));
    by_name_[request.rid] = rid;
  }
  sched::TokenizedRequest wire;  // what the scheduler needs of it, under the pipeline's id
  wire.rid = rid;
  wire.input_ids = request.input_ids;
  wire.sampling = request.sampling;
  wire.stop_token_ids = request.stop_token_ids;
  wire.stop_strs = request.stop;
  wire.stream = request.stream;
  wire.return_logprob = request.return_logprob;
  wire.top_logprobs_num = request.top_logprobs;
  wire.priority = request.priority;
  wire.cache_salt = request.cache_salt;
  wire.routing_key = request.routing_key;
  wire.grammar = request.grammar;
  const size_t bytes = TokenizedRequestBytes(wire);
  Status status;
  {
    std::lock_guard<std::mutex> l(pub_mu_);
    transport::Publisher& requests = *groups_[static_cast<size_t>(group)].requests;
    auto chunk = requests.Loan(bytes);
    if (chunk.ok()) {
      timespec ts{};
      clock_gettime(CLOCK_MONOTONIC, &ts);
      status = EncodeTokenizedRequest(wire, double(ts.tv_sec) + ts.tv_nsec * 1e-9, *chunk, bytes);
      if (!status.ok()) {
        requests.Release(*chunk);
      } else {
        requests.Publish(*chunk);
      }
    } else {
      status = chunk.status().code() == StatusCode::kOutOfRange
                   ? Status::InvalidArgument("the request is too large for the transport: " + chunk.status().message())
                   : Status::Unavailable("cannot queue the request: " + chunk.status().message());
    }
  }
  if (!status.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    CountEnded(pending_.at(rid));
    pending_.erase(rid);
    by_name_.erase(request.rid);
    return status;
  }
  return Status::Ok();
}

Status ApiNode::PublishAbort(int32_t group, uint64_t rid) {
  std::lock_guard<std::mutex> l(pub_mu_);
  transport::Publisher& requests = *groups_[static_cast<size_t>(group)].requests;
  RS_ASSIGN_OR_RETURN(void* chunk, requests.Loan(sizeof(transport::AbortRequestMsg)));
  transport::MessageWriter<transport::AbortRequestMsg> w(chunk, sizeof(transport::AbortRequestMsg));
  w.msg()->rid = rid;
  requests.Publish(chunk);
  return Status::Ok();
}

void ApiNode::Abort(const std::string& rid) {
  uint64_t id = 0;
  int32_t group = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = by_name_.find(rid);
    if (it == by_name_.end()) return;  // already finished
    id = it->second;
    group = pending_.at(id).group;
  }
  if (Status s = PublishAbort(group, id); !s.ok())
    LOG(ERROR) << name() << ": cannot abort " << rid << ": " << s.ToString();
}

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
  nlohmann::json nodes = nlohmann::json::object();
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    for (const auto& [n, s] : nodes_) nodes[n] = {{"state", s.state}, {"ready", s.ready}};
  }
  info["nodes"] = nodes;
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
    case Kind::kListNodes: {
      nlohmann::json nodes = nlohmann::json::object();
      auto now = Clock::now();
      std::lock_guard<std::mutex> l(nodes_mu_);
      for (const auto& [n, s] : nodes_)
        nodes[n] = {{"state", s.state}, {"ready", s.ready}, {"pid", s.pid},
                    {"last_seen_s", std::chrono::duration<double>(now - s.when).count()}};
      return nlohmann::json{{"nodes", nodes}}.dump();
    }
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
  // A scrape never waits for another: while one refreshes, the others render the cached figures.
  std::string stats;
  bool stale;
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    stale = Clock::now() - stats_time_ > std::chrono::milliseconds(100);
    stats = stats_json_;
  }
  if (stale) {
    std::unique_lock<std::mutex> refresh(stats_refresh_mu_, std::try_to_lock);
    if (refresh.owns_lock()) {
      control::ControlRequest req;
      req.mutable_get_stats();
      auto reply = Control(req);
      if (reply.ok() && reply->success()) {
        std::lock_guard<std::mutex> l(stats_mu_);
        stats = stats_json_ = reply->json();
        stats_time_ = Clock::now();
      }
    }
  }
  return RenderMetrics(metrics_, server_->class_rejected(), stats);
}

// ---- receiving ---------------------------------------------------------------------

void ApiNode::ReceiveLoop() {
  while (receiver_.running()) {
    waiter_->Wait(std::chrono::milliseconds(200));
    for (int32_t g = 0; g < static_cast<int32_t>(groups_.size()); ++g) {
      Group& group = groups_[static_cast<size_t>(g)];
      // A group's scheduler sends the cache events behind its outputs before them: taking the
      // events again before each output means a request routed after a response was delivered
      // sees what that request left in the cache.
      auto take_events = [&] {
        if (group.cache_events)
          while (transport::Received r = group.cache_events->TryTake()) HandleCacheEvents(g, r.data(), r.size());
      };
      take_events();
      while (transport::Received r = group.str_out->TryTake()) {
        take_events();
        HandleStrOut(group, r.data(), r.size());
      }
      while (transport::Received r = group.control_reply->TryTake()) HandleControlReply(r.data(), r.size());
      while (transport::Received r = group.node_status->TryTake()) HandleNodeStatus(g, r.data(), r.size());
    }
    CheckPipelineNodes();
  }
}

void ApiNode::HandleStrOut(const Group& group, const void* data, size_t size) {
  auto v = transport::ValidateBatchStrOut(data, size);
  if (!v.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed message on " << group.str_out->topic().ToString() << ": "
               << v.status().ToString();
    return;
  }
  const auto* m = *v;
  auto entries = transport::ArrayOf<OutputEntry>(m, m->entries);
  auto ids = transport::ArrayOf<int32_t>(m, m->ids);
  auto logprobs = transport::ArrayOf<float>(m, m->logprobs);
  auto text = transport::ArrayOf<char>(m, m->text);
  auto top_ids = transport::ArrayOf<int32_t>(m, m->top_ids);
  auto top_lps = transport::ArrayOf<float>(m, m->top_logprobs);
  auto now = Clock::now();
  for (const OutputEntry& e : entries) {
    std::shared_ptr<api::ResponseSink> sink;
    api::GenerateOutput out;
    out.text_delta.assign(text.data() + e.text_offset, e.text_len);
    auto new_ids = ids.subspan(e.ids_offset, e.ids_count);
    out.token_ids.assign(new_ids.begin(), new_ids.end());
    out.prompt_tokens = e.prompt_tokens;
    out.completion_tokens = e.completion_tokens;
    out.cached_tokens = e.cached_tokens;
    if (e.finished) out.finish = ToFinishReason(e, text);
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = pending_.find(e.rid);
      if (it == pending_.end()) continue;  // a request this api node no longer tracks
      Pending& p = it->second;
      sink = p.sink;
      if (p.return_logprob) {
        auto lp = logprobs.subspan(e.logprob_offset, e.logprob_count);
        for (size_t i = 0; i < lp.size() && i < out.token_ids.size(); ++i) {
          api::TokenLogprob t;
          t.token_id = out.token_ids[i];
          t.logprob = lp[i];
          t.token = std::string(tokenizer_->TokenToPiece(t.token_id));
          for (int32_t k = 0; k < e.top_n; ++k) {
            size_t at = e.top_offset + i * static_cast<size_t>(e.top_n) + k;
            if (at >= e.top_offset + e.top_count || top_ids[at] < 0) continue;
            api::TopLogprob alt;
            alt.token_id = top_ids[at];
            alt.logprob = top_lps[at];
            alt.token = std::string(tokenizer_->TokenToPiece(alt.token_id));
            t.top.push_back(std::move(alt));
          }
          out.logprobs.push_back(std::move(t));
        }
      }
      if (!out.token_ids.empty()) {
        double gap = std::chrono::duration<double>(now - p.last_token).count();
        if (!p.got_first) {
          metrics_.ttft.Observe(gap);
          metrics_.by_class[static_cast<size_t>(p.cls)].ttft.Observe(gap);
          p.got_first = true;
        } else {
          // Several tokens in one output share the gap evenly (stream_interval > 1).
          for (size_t i = 0; i < out.token_ids.size(); ++i) metrics_.inter_token.Observe(gap / out.token_ids.size());
        }
        p.last_token = now;
      }
      if (e.finished) {
        const double e2e = std::chrono::duration<double>(now - p.start).count();
        metrics_.e2e.Observe(e2e);
        metrics_.by_class[static_cast<size_t>(p.cls)].e2e.Observe(e2e);
        metrics_.prompt_tokens.fetch_add(e.prompt_tokens, std::memory_order_relaxed);
        metrics_.generation_tokens.fetch_add(e.completion_tokens, std::memory_order_relaxed);
        metrics_.cached_tokens.fetch_add(e.cached_tokens, std::memory_order_relaxed);
        metrics_.requests_finished.fetch_add(1, std::memory_order_relaxed);
        if (out.finish.kind == FinishKind::kAbort) metrics_.requests_aborted.fetch_add(1, std::memory_order_relaxed);
        CountEnded(p);
        by_name_.erase(p.rid);
        pending_.erase(it);
      }
    }
    sink->OnOutput(std::move(out));
  }
}

void ApiNode::HandleControlReply(const void* data, size_t size) {
  control::ControlReply reply;
  if (Status s = transport::ParseControl(data, size, &reply); !s.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed control reply: " << s.ToString();
    return;
  }
  change_comm_->HandleReply(reply);  // each lane drops the replies to the other's calls
  read_comm_->HandleReply(reply);
}

void ApiNode::HandleCacheEvents(int32_t group, const void* data, size_t size) {
  auto v = transport::ValidateCacheEvents(data, size);
  if (!v.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed cache event message of group " << groups_[group].ns << ": "
               << v.status().ToString();
    router_->ForgetGroup(group);  // its view would miss what the message said
    return;
  }
  if (!router_->BeginEvents(group, (*v)->epoch, (*v)->seq))
    LOG(WARNING) << name() << ": cache events of group " << groups_[group].ns
                 << " were lost; routing forgets what that group caches until it reports it again";
  ForEachCacheEvent(*v, [&](const sched::CacheEvent& e) { router_->ApplyEvent(group, e); });
}

void ApiNode::HandleNodeStatus(int32_t group, const void* data, size_t size) {
  auto v = transport::ValidateNodeStatus(data, size);
  if (!v.ok()) return;
  std::string restarted;
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    NodeSeen& s = nodes_[NodeKey(group, (*v)->name)];
    s.group = group;
    if (s.pid != 0 && s.pid != (*v)->pid) restarted = (*v)->name;
    s.ready = (*v)->ready != 0;
    s.state = NodeStateName(static_cast<NodeState>((*v)->state));
    s.component = (*v)->component;
    s.pid = (*v)->pid;
    s.when = Clock::now();
    if (s.component != "scheduler" && s.component != "detokenizer") restarted.clear();
  }
  if (restarted.empty()) return;
  if (router_) router_->ForgetGroup(group);  // a new scheduler starts with an empty cache
  FailPending(group, "the " + NodeKey(group, restarted) + " node restarted; the request was lost");
}

void ApiNode::CheckPipelineNodes() {
  std::vector<std::pair<std::string, int32_t>> silent;
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    auto now = Clock::now();
    for (auto& [n, s] : nodes_) {
      if (s.component != "scheduler" && s.component != "detokenizer") continue;
      if (s.pid != 0 && now - s.when > kNodeStatusFresh) {
        silent.emplace_back(n, s.group);
        s.pid = 0;  // report once; a new process is a new start
      }
    }
  }
  for (const auto& [n, group] : silent) FailPending(group, "the " + n + " node stopped responding; the request was lost");
}

void ApiNode::CountEnded(const Pending& p) {
  metrics_.requests_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (router_) router_->Finished(p.route);
}

void ApiNode::FailPending(int32_t group, const std::string& why) {
  std::vector<Pending> failed;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (group >= 0 && it->second.group != group) {
        ++it;
        continue;
      }
      CountEnded(it->second);
      by_name_.erase(it->second.rid);
      failed.push_back(std::move(it->second));
      it = pending_.erase(it);
    }
  }
  for (Pending& p : failed) {
    api::GenerateOutput out;
    out.finish.kind = FinishKind::kAbort;
    out.finish.message = why;
    out.finish.status_code = 503;
    p.sink->OnOutput(std::move(out));
  }
}

RADIXSERVE_DEFINE_NODE_COMPONENT("api", "OpenAI-compatible HTTP server, tokenizer and request tracking", ApiNode)

}  // namespace radixserve::nodes
