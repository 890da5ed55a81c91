#include "core/model/served_context.h"
#include "nodes/scheduler/scheduler_node.h"

#include "kernels/cpu/cpu_features.h"

#include <glog/logging.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/gguf/gguf_reader.h"
#include "core/scheduler/plugin_host.h"
#include "nodes/component.h"
#include "transport/control_channel.h"
#include "transport/messages.h"

namespace radixserve::nodes {

using transport::OutputEntry;

namespace {

// "a=1,b=x" → {a: 1, b: x}
Result<std::map<std::string, std::string>> ParsePluginParams(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidArgument("plugin parameter '" + item + "' must be name=value");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}
}  // namespace

SchedulerNode::SchedulerNode(NodeContext ctx) : Node(std::move(ctx)) {
  const sched::SchedulerConfig d;  // the one source of the defaults
  auto& p = params();
  p.DeclareString("model", "", "GGUF file: tokenizer (EOS ids, stop strings) and context length", {}, true);
  p.DeclareString("policy", "lpm", "scheduling policy plugin");
  p.DeclareInt("context", 0, 0, int64_t(1) << 30, "served context in tokens: 0 = the model's, at most 4096 (model::kDefaultServedContext)", true);
  p.DeclareString("policy_params", "", "policy plugin parameters: name=value,name=value");
  p.DeclareString("cache", "radix", "prefix cache plugin", {}, true);
  p.DeclareString("cache_params", "", "cache plugin parameters: name=value,name=value", {}, true);
  p.DeclareString("plugin_dirs", "", "colon-separated plugin directories (default: next to the libraries)", {}, true);
  p.DeclareInt("page_size", d.page_size, 1, 256, "KV page size in tokens", true);
  p.DeclareDouble("worker_wait_s", 30.0, 0.0, 3600.0,
                  "how long requests wait for a worker to (re)connect before their batches fail");
  p.DeclareInt("max_total_tokens", d.max_total_tokens, 64, int64_t(1) << 32, "KV slots (must match the worker's kv_slots)", true);
  p.DeclareInt("max_running_requests", d.max_running_requests, 1, 65536, "requests decoding at once", true);
  p.DeclareInt("max_prefill_tokens", d.max_prefill_tokens, 16, 1 << 24, "prompt tokens per prefill batch", true);
  p.DeclareInt("chunked_prefill_size", d.chunked_prefill_size, -1, 1 << 24, "chunk size for long prompts (<= 0: no chunking)", true);
  p.DeclareBool("enable_mixed_chunk", d.enable_mixed_chunk, "run decode steps inside chunked prefill batches", true);
  p.DeclareBool("overlap", d.overlap, "prepare the next batch while the worker runs this one", true);
  p.DeclareInt("stream_interval", d.stream_interval, 1, 1 << 20, "stream every N tokens", true);
  p.DeclareInt("max_queued_requests", d.max_queued_requests, 1, 1 << 30, "waiting requests beyond which new ones are refused", true);
  p.DeclareDouble("waiting_timeout_s", d.waiting_timeout_s, 0, 1e9,
                  "end requests that waited longer than this without running with 503 (0: off)", true);
  p.DeclareDouble("running_timeout_s", d.running_timeout_s, 0, 1e9, "abort requests running longer than this, 503 (0: off)", true);
  p.DeclareInt("worker_timeout_ms", 120000, 100, 3600000, "how long a forward step may take", true);
  p.DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
}

SchedulerNode::~SchedulerNode() { Shutdown(); }

bool SchedulerNode::Ready() const {
  return state() == NodeState::kActive && worker_connected_.load();
}

sched::SchedulerConfig SchedulerNode::BuildConfig() const {
  sched::SchedulerConfig c;
  const auto& p = params();
  c.page_size = static_cast<int32_t>(p.GetInt("page_size"));
  c.max_total_tokens = p.GetInt("max_total_tokens");
  c.max_running_requests = static_cast<int32_t>(p.GetInt("max_running_requests"));
  // SCHEDULER_SPEC 4.3 keeps one position spare (max_req_len - input - 1), but the last sampled
  // token needs no KV: with one more, prompt + output may fill the model's whole context.
  c.max_req_len = context_length_ + 1;
  c.max_prefill_tokens = static_cast<int32_t>(p.GetInt("max_prefill_tokens"));
  c.chunked_prefill_size = static_cast<int32_t>(p.GetInt("chunked_prefill_size"));
  c.enable_mixed_chunk = p.GetBool("enable_mixed_chunk");
  c.overlap = p.GetBool("overlap");
  c.stream_interval = static_cast<int32_t>(p.GetInt("stream_interval"));
  c.max_queued_requests = static_cast<int32_t>(p.GetInt("max_queued_requests"));
  c.waiting_timeout_s = p.GetDouble("waiting_timeout_s");
  c.running_timeout_s = p.GetDouble("running_timeout_s");
  c.vocab_size = tokenizer_->vocab_size();
  for (int32_t id = 0; id < tokenizer_->vocab_size(); ++id)
    if (tokenizer_->IsEog(id)) c.eos_token_ids.push_back(id);
  return c;
}

Status SchedulerNode::OnConfigure() {
  std::string path = params().GetString("model");
  if (path.empty()) return Status::InvalidArgument("parameter 'model' is required");
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(path));
  RS_ASSIGN_OR_RETURN(tokenizer_, Tokenizer::FromGguf(*file));
  RS_ASSIGN_OR_RETURN(context_length_, model::ServedContext(*file, params().GetInt("context")));

  std::vector<std::string> dirs;
  std::stringstream ss(params().GetString("plugin_dirs"));
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty()) dirs.push_back(d);
  host_ = std::make_unique<sched::PluginHost>(dirs.empty() ? sched::PluginHost::DefaultDirs() : dirs);
  RS_ASSIGN_OR_RETURN(auto cache_params, ParsePluginParams(params().GetString("cache_params")));
  RS_ASSIGN_OR_RETURN(auto policy_params, ParsePluginParams(params().GetString("policy_params")));
  RS_ASSIGN_OR_RETURN(sched::CachePtr cache, host_->CreateCache(params().GetString("cache"), cache_params));
  cache_name_ = params().GetString("cache");
  cache_params_ = cache_params;
  RS_ASSIGN_OR_RETURN(sched::PolicyPtr policy, host_->CreatePolicy(params().GetString("policy"), policy_params));

  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(worker_, RemoteWorker::Create(
                                   ResolveTopic(transport::topics::kForwardBatch),
                                   ResolveTopic(transport::topics::kForwardResult), ResolveTopic("node_status"), opts,
                                   std::chrono::milliseconds(params().GetInt("worker_timeout_ms"))));
  RS_ASSIGN_OR_RETURN(requests_, transport::Subscriber::Create(ResolveTopic(transport::topics::kRequests), opts));
  RS_ASSIGN_OR_RETURN(control_, transport::Subscriber::Create(ResolveTopic(transport::topics::kControl), opts));
  RS_ASSIGN_OR_RETURN(out_, transport::Publisher::Create(ResolveTopic(transport::topics::kTokenIdOut), opts));
  RS_ASSIGN_OR_RETURN(control_reply_,
                      transport::Publisher::Create(ResolveTopic(transport::topics::kControlReply), opts));
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  RS_RETURN_IF_ERROR(waiter_->Attach(*requests_));
  RS_RETURN_IF_ERROR(waiter_->Attach(*control_));

  const Tokenizer* tok = tokenizer_.get();
  scheduler_ = std::make_unique<sched::Scheduler>(
      BuildConfig(), worker_.get(), std::move(cache), std::move(policy),
      [this](const sched::BatchTokenIdOut& out) { SendOutputs(out); },
      [tok](std::span<const int32_t> ids) { return tok->DecodeWindow(ids, true); });
  return Status::Ok();
}

Status SchedulerNode::OnActivate() {
  running_.store(true);
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

Status SchedulerNode::OnDeactivate() {
  running_.store(false);
  worker_connected_.store(false);
  if (waiter_) waiter_->Wake();
  if (thread_.joinable()) thread_.join();
  return Status::Ok();
}

Status SchedulerNode::OnCleanup() {
  scheduler_.reset();
  worker_.reset();
  waiter_.reset();
  requests_.reset();
  control_.reset();
  out_.reset();
  control_reply_.reset();
  host_.reset();
  tokenizer_.reset();
  return Status::Ok();
}

// ---- the loop ------------------------------------------------------------------------

void SchedulerNode::Loop() {
  LoopUntilStopped();
  for (uint64_t call_id : swaps_in_flight_)
    Reply(call_id, Failure(Status::Unavailable("cache swap did not complete before shutdown")));
  swaps_in_flight_.clear();
}

void SchedulerNode::LoopUntilStopped() {
  while (running_.load()) {
    DrainRequests();
    DrainControl();
    if (worker_->TakeWorkerLost()) HandleWorkerLoss();
    const bool connected = worker_->WorkerConnected();
    worker_connected_.store(connected);  // read by Ready() from the status thread
    // No worker (it died and its successor has not subscribed yet): hold the requests instead of
    // failing each batch at once; past worker_wait_s without one, steps run again and fail with
    // "the worker is gone", so that no request waits forever.
    if (connected) {
      worker_absent_since_.reset();
    } else if (!scheduler_->no_requests()) {
      const auto now = std::chrono::steady_clock::now();
      if (!worker_absent_since_) worker_absent_since_ = now;
      if (now - *worker_absent_since_ < std::chrono::duration<double>(params().GetDouble("worker_wait_s"))) {
        waiter_->Wait(std::chrono::milliseconds(10));
        continue;
      }
    }
    bool did_work = false;
    Status s = scheduler_->Step(&did_work);
    if (!s.ok()) {
      LOG(ERROR) << name() << ": scheduler step failed: " << s.ToString();
      did_work = false;
    }
    // Idle: block until a request or control message arrives (no busy loop).
    if (!did_work && scheduler_->idle()) {
      worker_->MarkIdle();  // the wait below is idle time, not scheduling overhead
      waiter_->Wait(std::chrono::milliseconds(100));
    }
  }
}

void SchedulerNode::DrainRequests() {
  while (transport::Received r = requests_->TryTake()) {
    switch (transport::PeekKind(r.data(), r.size())) {
      case transport::MessageKind::kTokenizedRequest:
        HandleTokenizedRequest(r.data(), r.size());
        break;
      case transport::MessageKind::kAbortRequest: {
        auto m = transport::ValidateAbortRequest(r.data(), r.size());
        if (m.ok()) {
          scheduler_->Abort((*m)->rid);
          break;
        }
        [[fallthrough]];
      }
      default:
        ++dropped_messages_;
        LOG(ERROR) << name() << ": dropped a malformed message on " << requests_->topic().ToString();
    }
  }
}

void SchedulerNode::HandleTokenizedRequest(const void* data, size_t size) {
  auto v = transport::ValidateTokenizedRequest(data, size);
  if (!v.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed request: " << v.status().ToString();
    return;
  }
  const transport::TokenizedRequestMsg* m = *v;
  sched::TokenizedRequest g;
  g.rid = m->rid;
  auto ids = transport::ArrayOf<int32_t>(m, m->input_ids);
  g.input_ids.assign(ids.begin(), ids.end());
  g.sampling = m->sampling;
  auto stop_ids = transport::ArrayOf<int32_t>(m, m->stop_token_ids);
  g.stop_token_ids.assign(stop_ids.begin(), stop_ids.end());
  auto bytes = transport::ArrayOf<char>(m, m->stop_str_bytes);
  size_t pos = 0;
  for (uint32_t len : transport::ArrayOf<uint32_t>(m, m->stop_str_lens)) {
    g.stop_strs.emplace_back(bytes.data() + pos, len);
    pos += len;
  }
  g.stream = m->stream != 0;
  g.return_logprob = m->return_logprob != 0;
  g.top_logprobs_num = m->top_logprobs_num;
  if (m->has_priority) g.priority = m->priority;
  scheduler_->Submit(std::move(g));
}

void SchedulerNode::SendOutputs(const sched::BatchTokenIdOut& batch) {
  if (batch.outputs.empty()) return;
  // Size first: ids (the prompt tail the first time + new ids), logprobs, finish texts.
  size_t n_ids = 0, n_out = 0, n_lp = 0, n_text = 0, n_top = 0;
  for (const auto& o : batch.outputs) {
    n_ids += o.prompt_tail.size() + o.output_ids.size();
    n_out += o.output_ids.size();
    n_lp += o.output_logprobs.size();
    n_top += o.top_ids.size();
    n_text += o.finish.matched_str.size() + o.finish.message.size();
  }
  size_t bytes = transport::BatchTokenIdOutMsg::Bytes(
      {.entries = batch.outputs.size(), .ids = n_ids, .out_ids = n_out, .logprobs = n_lp, .text_bytes = n_text, .top = n_top});
  auto chunk = out_->Loan(bytes);
  if (!chunk.ok()) {
    LOG(ERROR) << name() << ": cannot send outputs of " << batch.outputs.size()
               << " requests: " << chunk.status().ToString();
    return;
  }
  transport::MessageWriter<transport::BatchTokenIdOutMsg> w(*chunk, bytes);
  auto* m = w.msg();
  auto entries = w.Append<OutputEntry>(m->entries, batch.outputs.size());
  auto ids = w.Append<int32_t>(m->ids, n_ids);
  auto out_ids = w.Append<int32_t>(m->out_ids, n_out);
  auto lps = w.Append<float>(m->logprobs, n_lp);
  auto text = w.Append<char>(m->text, n_text);
  auto top_ids = w.Append<int32_t>(m->top_ids, n_top);
  auto top_lps = w.Append<float>(m->top_logprobs, n_top);
  size_t ip = 0, op = 0, lp = 0, tp = 0, kp = 0;
  for (size_t i = 0; i < batch.outputs.size(); ++i) {
    const sched::TokenOutput& o = batch.outputs[i];
    OutputEntry& e = entries[i];
    std::memset(&e, 0, sizeof(e));
    e.rid = o.rid;
    e.finished = o.finished;
    e.finish_kind = static_cast<uint8_t>(o.finish.kind);
    e.matched_token = o.finish.matched_token;
    e.finish_length = o.finish.length;
    e.status_code = o.finish.status_code;
    e.prompt_tokens = o.prompt_tokens;
    e.completion_tokens = o.completion_tokens;
    e.cached_tokens = o.cached_tokens;
    e.skip_special_tokens = o.skip_special_tokens;
    e.ids_offset = static_cast<uint32_t>(ip);
    std::copy(o.prompt_tail.begin(), o.prompt_tail.end(), ids.data() + ip);
    ip += o.prompt_tail.size();
    e.read_offset = static_cast<int32_t>(o.prompt_tail.size());
    std::copy(o.output_ids.begin(), o.output_ids.end(), ids.data() + ip);
    ip += o.output_ids.size();
    e.ids_count = static_cast<uint32_t>(ip - e.ids_offset);
    e.out_ids_offset = static_cast<uint32_t>(op);
    std::copy(o.output_ids.begin(), o.output_ids.end(), out_ids.data() + op);
    op += o.output_ids.size();
    e.out_ids_count = static_cast<uint32_t>(o.output_ids.size());
    e.logprob_offset = static_cast<uint32_t>(lp);
    std::copy(o.output_logprobs.begin(), o.output_logprobs.end(), lps.data() + lp);
    lp += o.output_logprobs.size();
    e.logprob_count = static_cast<uint32_t>(o.output_logprobs.size());
    e.top_n = o.top_n;
    e.top_offset = static_cast<uint32_t>(kp);
    std::copy(o.top_ids.begin(), o.top_ids.end(), top_ids.data() + kp);
    std::copy(o.top_logprobs.begin(), o.top_logprobs.end(), top_lps.data() + kp);
    kp += o.top_ids.size();
    e.top_count = static_cast<uint32_t>(o.top_ids.size());
    const std::string& ft = o.finish.kind == FinishKind::kMatchedStr ? o.finish.matched_str : o.finish.message;
    e.finish_text_offset = static_cast<uint32_t>(tp);
    std::copy(ft.begin(), ft.end(), text.data() + tp);
    tp += ft.size();
    e.finish_text_len = static_cast<uint32_t>(ft.size());
  }
  out_->Publish(*chunk);
}

void SchedulerNode::HandleWorkerLoss() {
  ++worker_losses_;
  LOG(ERROR) << name() << ": the worker is gone; its KV cache is lost: flushing the prefix cache, running requests "
             << "recompute on the next worker (those of the interrupted step end with an error)";
  auto cache = host_->CreateCache(cache_name_, cache_params_);
  if (!cache.ok()) {
    LOG(ERROR) << name() << ": cannot recreate the cache: " << cache.status().ToString();
    return;
  }
  scheduler_->WorkerLost(std::move(*cache), [this](const Status& s, const std::string& r) {
    if (s.ok()) LOG(INFO) << name() << ": after the worker loss: " << r;
  });
}

// ---- control ---------------------------------------------------------------------------

void SchedulerNode::DrainControl() {
  while (transport::Received r = control_->TryTake()) HandleControl(r.data(), r.size());
}

void SchedulerNode::HandleControl(const void* data, size_t size) {
  control::ControlRequest req;
  if (Status s = transport::ParseControl(data, size, &req); !s.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed control message: " << s.ToString();
    return;
  }
  std::optional<control::ControlReply> reply = Execute(req);
  if (reply) Reply(req.call_id(), std::move(*reply));  // else a cache swap answers when it completes
}

void SchedulerNode::Reply(uint64_t call_id, control::ControlReply reply) {
  reply.set_call_id(call_id);
  reply.set_responder(name());
  if (Status s = transport::PublishControl(*control_reply_, reply); !s.ok())
    LOG(ERROR) << name() << ": cannot reply to a control call: " << s.ToString();
}

control::ControlReply SchedulerNode::Failure(const Status& s) {
  control::ControlReply reply;
  reply.set_success(false);
  reply.set_code(static_cast<int32_t>(s.code()));
  reply.set_message(s.message());
  return reply;
}

std::optional<control::ControlReply> SchedulerNode::Execute(const control::ControlRequest& req) {
  control::ControlReply reply;
  auto fail = [](const Status& s) { return Failure(s); };
  // A plugin or parameter the request names that cannot be used is the caller's mistake, whatever
  // the loader's reason (missing, wrong ABI, refused configuration): 400, not a server state.
  auto refuse = [](const Status& s) { return Failure(Status::InvalidArgument(s.message())); };
  switch (req.body_case()) {
    case control::ControlRequest::kSwapPolicy: {
      std::map<std::string, std::string> p(req.swap_policy().params().begin(), req.swap_policy().params().end());
      auto policy = host_->CreatePolicy(req.swap_policy().name(), p);
      if (!policy.ok()) return refuse(policy.status());
      std::string old = policy_name();
      scheduler_->SwapPolicy(std::move(*policy));
      reply.set_success(true);
      reply.set_message("policy " + old + " -> " + req.swap_policy().name() + " at the next iteration");
      return reply;
    }
    case control::ControlRequest::kSwapCache:
    case control::ControlRequest::kFlushCache: {
      bool flush = req.body_case() == control::ControlRequest::kFlushCache;
      // A flush drops only what no request needs: refused while any request is unfinished; requests
      // that finished but whose last step is still in flight are drained first.
      if (flush && scheduler_->num_unfinished() > 0)
        return fail(Status::FailedPrecondition(
            "cannot flush the cache while requests run: " + std::to_string(scheduler_->num_unfinished()) +
            " unfinished (" + std::to_string(scheduler_->num_running()) + " running, " +
            std::to_string(scheduler_->num_waiting()) + " waiting)"));
      std::string cname = flush ? std::string(scheduler_->cache().name()) : req.swap_cache().name();
      std::map<std::string, std::string> p = cache_params_;
      if (!flush) p = std::map<std::string, std::string>(req.swap_cache().params().begin(), req.swap_cache().params().end());
      auto cache = host_->CreateCache(cname, p);
      if (!cache.ok()) return refuse(cache.status());
      if (!flush) {
        cache_name_ = cname;
        cache_params_ = p;
      }
      if (!flush && !req.swap_cache().mode().empty() && req.swap_cache().mode() != "drain" &&
          req.swap_cache().mode() != "flush")
        return fail(Status::InvalidArgument("cache swap mode must be drain or flush, got '" + req.swap_cache().mode() + "'"));
      const bool flush_mode = !flush && req.swap_cache().mode() == "flush";
      // A fresh cache replaces the old one (when idle that is exactly a flush) at an iteration
      // boundary of the one loop, after a drain if asked; the reply goes out when it completes.
      const uint64_t call_id = req.call_id();
      swaps_in_flight_.insert(call_id);
      scheduler_->SwapCache(std::move(*cache), flush_mode ? sched::CacheSwapMode::kFlush : sched::CacheSwapMode::kDrain,
                            [this, call_id, flush](const Status& s, const std::string& report) {
                              swaps_in_flight_.erase(call_id);
                              if (!s.ok()) return Reply(call_id, Failure(s));
                              control::ControlReply done;
                              done.set_success(true);
                              done.set_message(flush ? "cache flushed" : report);
                              Reply(call_id, std::move(done));
                            });
      return std::nullopt;
    }
    case control::ControlRequest::kGetStats:
      reply.set_success(true);
      reply.set_json(StatsJson());
      return reply;
    case control::ControlRequest::kGetServerInfo:
      reply.set_success(true);
      reply.set_json(ServerInfoJson());
      return reply;
    case control::ControlRequest::kListPlugins: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& info : host_->List())
        list.push_back({{"name", info.name},
                        {"kind", info.kind == RS_PLUGIN_POLICY ? "policy" : "cache"},
                        {"path", info.path},
                        {"description", info.description}});
      reply.set_success(true);
      reply.set_json(list.dump());
      return reply;
    }
    case control::ControlRequest::kLoadPlugin: {
      auto info = host_->Inspect(req.load_plugin());
      if (!info.ok()) return refuse(info.status());
      reply.set_success(true);
      reply.set_message("plugin " + info->name + " is loadable from " + info->path);
      return reply;
    }
    case control::ControlRequest::kSetParameter: {
      Status s = SetParameter(req.set_parameter().name(), req.set_parameter().value());
      if (!s.ok()) return refuse(s);
      reply.set_success(true);
      return reply;
    }
    case control::ControlRequest::BODY_NOT_SET:
      break;
  }
  return fail(Status::InvalidArgument("empty control request"));
}

std::string SchedulerNode::policy_name() const { return std::string(scheduler_->policy().name()); }

std::string SchedulerNode::StatsJson() const {
  const auto& st = scheduler_->stats();
  const auto& alloc = scheduler_->allocator();
  double total = double(alloc.size());
  double prompt = double(st.cached_prompt_tokens + st.computed_prompt_tokens);
  const RemoteWorker::Overhead ov = worker_->overhead();
  nlohmann::json j = {
      {"num_running_reqs", scheduler_->num_running()},
      {"num_queue_reqs", scheduler_->num_waiting()},
      {"token_usage", total > 0 ? (total - double(alloc.available_size())) / total : 0.0},
      {"cache_hit_rate", prompt > 0 ? double(st.cached_prompt_tokens) / prompt : 0.0},
      {"cached_prompt_tokens", st.cached_prompt_tokens},
      {"computed_prompt_tokens", st.computed_prompt_tokens},
      {"retractions", st.retractions},
      {"preemptions", st.preemptions},
      {"finished", st.finished},
      {"aborted", st.aborted},
      {"policy_faults", st.policy_faults},
      {"waiting_timeouts", st.waiting_timeouts},
      {"running_timeouts", st.running_timeouts},
      {"iterations", st.iterations},
      {"prefill_batches", st.prefill_batches},
      {"decode_batches", st.decode_batches},
      {"kv_total", alloc.size()},
      {"kv_available", alloc.available_size()},
      {"kv_evictable", scheduler_->cache().evictable_size()},
      {"kv_protected", scheduler_->cache().protected_size()},
      {"req_slots_total", scheduler_->req_pool().size()},
      {"req_slots_available", scheduler_->req_pool().available_size()},
      {"new_token_ratio", scheduler_->new_token_ratio()},
      {"dropped_messages", dropped_messages_},
      {"worker_losses", worker_losses_},
      {"worker_request_states", worker_->worker_request_states()},
      {"worker_known_requests", scheduler_->worker_states()},
      {"scheduler_overhead_p50", ov.share_p50},
      {"scheduler_overhead_p90", ov.share_p90},
      {"scheduler_gap_us_p50", ov.gap_us_p50},
      {"step_us_p50", ov.step_us_p50},
      {"overhead_samples", ov.samples},
      {"failed_batches", st.failed_batches},
  };
  return j.dump();
}

std::string SchedulerNode::ServerInfoJson() const {
  nlohmann::json j;
  j["scheduler"] = {{"policy", policy_name()},
                    {"policy_stats", nlohmann::json::parse(scheduler_->policy().StatsJson(), nullptr, false)},
                    {"cache", std::string(scheduler_->cache().name())},
                    {"parameters", params().Snapshot()},
                    {"stats", nlohmann::json::parse(StatsJson())}};
  // The machine's CPU features and the kernels and GEMM core type a worker here runs with (the
  // worker logs the same line at start-up; the choice depends only on the CPU).
  j["system_info"] = kernels::SystemInfo();
  return j.dump();
}

namespace {
Node* Create(const NodeContext* ctx) { return new SchedulerNode(*ctx); }
const RsNodeComponent kComponent = {RADIXSERVE_NODE_ABI_VERSION, "scheduler",
                                    "SGLang-style scheduler loop with policy and cache plugins", &Create};
}  // namespace
RADIXSERVE_EXPORT_NODE_COMPONENT(kComponent)

}  // namespace radixserve::nodes
