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

using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
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
  return health_.AnyGroupReady();
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
  const std::vector<std::string> group_ns = data_parallel_ ? dp : std::vector<std::string>{ns()};
  for (const std::string& g : group_ns) RS_RETURN_IF_ERROR(ConfigureGroup(g, opts));
  health_.Configure(group_ns, data_parallel_, SplitCommas(params().GetString("required_nodes")));
  if (data_parallel_) {
    std::vector<std::string> dirs;
    std::stringstream ss(params().GetString("plugin_dirs"));
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
    plugins_ = std::make_unique<sched::PluginHost>(dirs.empty() ? sched::PluginHost::DefaultDirs() : dirs);
    RS_ASSIGN_OR_RETURN(auto policy, LoadRoutingPolicy());
    router_ = std::make_unique<router::Router>(dp, std::move(policy));
  }
  streams_.set_router(router_.get());
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
    left = streams_.size();
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
  streams_.Fail(-1, "the server is shutting down");
  return Status::Ok();
}

Status ApiNode::OnCleanup() {
  server_.reset();
  change_comm_.reset();
  read_comm_.reset();
  groups_.clear();  // before the waiter they are attached to
  streams_.set_router(nullptr);
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
  // Read before RequestStreams takes its lock: the parameter store has its own.
  const int64_t max_queued = params().GetInt("max_queued_requests");
  router::Router::Ticket route{0, 0};  // without data parallelism: the one group, untracked
  if (data_parallel_) {
    std::array<bool, router::GroupCacheView::kMaxGroups> healthy{};
    health_.ReadyGroups(std::span<bool>(healthy.data(), groups_.size()));
    route = router_->Route({request.input_ids, request.spec.cache_salt},
                           std::span<const bool>(healthy.data(), groups_.size()));
    if (route.group < 0) return Status::Unavailable("no data-parallel group is ready to serve; retry later");
  }
  const int32_t group = route.group;
  RS_ASSIGN_OR_RETURN(const uint64_t rid, streams_.Open(request, std::move(sink), group, route, max_queued));
  sched::TokenizedRequest wire;  // what the scheduler needs of it, under the pipeline's id
  wire.rid = rid;
  wire.input_ids = request.input_ids;
  wire.spec = request.spec;
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
    streams_.Cancel(rid);
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
  const auto found = streams_.Find(rid);
  if (!found) return;  // already finished
  const auto [id, group] = *found;
  if (Status s = PublishAbort(group, id); !s.ok())
    LOG(ERROR) << name() << ": cannot abort " << rid << ": " << s.ToString();
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
  streams_.Deliver(**v, *tokenizer_);
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
  const std::string restarted = health_.Update(group, **v);
  if (restarted.empty()) return;
  if (router_) router_->ForgetGroup(group);  // a new scheduler starts with an empty cache
  streams_.Fail(group, "the " + restarted + " node restarted; the request was lost");
}

void ApiNode::CheckPipelineNodes() {
  for (const auto& [n, group] : health_.TakeSilent())
    streams_.Fail(group, "the " + n + " node stopped responding; the request was lost");
}

RADIXSERVE_DEFINE_NODE_COMPONENT("api", "OpenAI-compatible HTTP server, tokenizer and request tracking", ApiNode)

}  // namespace radixserve::nodes
