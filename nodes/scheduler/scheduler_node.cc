#include "core/model/served_context.h"
#include "nodes/scheduler/scheduler_node.h"

#include "kernels/cpu/cpu_features.h"

#include <glog/logging.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/gguf/gguf_reader.h"
#include "core/scheduler/plugin_host.h"
#include "nodes/component.h"
#include "nodes/output_codec.h"
#include "nodes/request_codec.h"
#include "transport/control_channel.h"
#include "transport/messages.h"

namespace radixserve::nodes {

using transport::OutputEntry;

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
  p.DeclareInt("fair_prefill_chunk", d.fair_prefill_chunk, 0, 1 << 24,
               "while short prompts wait behind long ones, no request takes more prefill tokens a pass (0: off)");
  p.DeclareInt("max_queued_requests", d.max_queued_requests, 1, 1 << 30, "waiting requests beyond which new ones are refused", true);
  p.DeclareDouble("waiting_timeout_s", d.waiting_timeout_s, 0, 1e9,
                  "end requests that waited longer than this without running with 503 (0: off)", true);
  p.DeclareDouble("running_timeout_s", d.running_timeout_s, 0, 1e9, "abort requests running longer than this, 503 (0: off)", true);
  p.DeclareInt("worker_timeout_ms", 120000, 100, 3600000, "how long a forward step may take", true);
  p.DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
  p.DeclareInt("pp_size", 1, 1, 64,
               "pipeline stages of the worker (its workers' pp_size): one decode micro-batch in flight per stage", true);
}

SchedulerNode::~SchedulerNode() { Shutdown(); }

// Parameters set at run time arrive as control calls, on the loop thread that steps the scheduler.
Status SchedulerNode::OnParameterChanged(const std::string& name) {
  if (name == "fair_prefill_chunk" && service_ != nullptr)
    service_->SetFairPrefillChunk(static_cast<int32_t>(params().GetInt(name)));
  return Status::Ok();
}

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
  c.fair_prefill_chunk = static_cast<int32_t>(p.GetInt("fair_prefill_chunk"));
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

  SchedulerService::Options o;
  std::stringstream ss(params().GetString("plugin_dirs"));
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty()) o.plugin_dirs.push_back(d);
  RS_ASSIGN_OR_RETURN(o.cache_params, ParsePluginParams(params().GetString("cache_params")));
  RS_ASSIGN_OR_RETURN(o.policy_params, ParsePluginParams(params().GetString("policy_params")));
  o.cache = params().GetString("cache");
  o.policy = params().GetString("policy");
  o.config = BuildConfig();

  const int pp_size = static_cast<int>(params().GetInt("pp_size"));
  if (pp_size > 1 && o.config.enable_mixed_chunk)
    return Status::InvalidArgument("enable_mixed_chunk cannot be used with pp_size " + std::to_string(pp_size) +
                                   ": a mixed batch would hold requests whose last step is still at a stage");
  if (pp_size > 1 && !o.config.overlap)
    LOG(WARNING) << name() << ": overlap is off, so the " << pp_size << " pipeline stages run one batch at a time";
  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(worker_, RemoteWorker::Create(
                                   ResolveTopic(transport::topics::kForwardBatch),
                                   ResolveTopic(transport::topics::kForwardResult), ResolveTopic(transport::topics::kNodeStatus), opts,
                                   std::chrono::milliseconds(params().GetInt("worker_timeout_ms")), pp_size));
  RS_ASSIGN_OR_RETURN(requests_, transport::Subscriber::Create(ResolveTopic(transport::topics::kRequests), opts));
  RS_ASSIGN_OR_RETURN(control_, transport::Subscriber::Create(ResolveTopic(transport::topics::kControl), opts));
  RS_ASSIGN_OR_RETURN(out_, transport::Publisher::Create(ResolveTopic(transport::topics::kTokenIdOut), opts));
  RS_ASSIGN_OR_RETURN(control_reply_,
                      transport::Publisher::Create(ResolveTopic(transport::topics::kControlReply), opts));
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  RS_RETURN_IF_ERROR(waiter_->Attach(*requests_));
  RS_RETURN_IF_ERROR(waiter_->Attach(*control_));

  const Tokenizer* tok = tokenizer_.get();
  SchedulerService::Sinks sinks;
  sinks.outputs = [this](const sched::BatchTokenIdOut& out) { SendOutputs(out); };
  sinks.reply = [this](uint64_t call_id, control::ControlReply reply) { Reply(call_id, std::move(reply)); };
  sinks.set_parameter = [this](const std::string& n, const std::string& v) { return SetParameter(n, v); };
  sinks.add_stats = [this](nlohmann::json* j) {
    const RemoteWorker::Overhead ov = worker_->overhead();
    (*j)["dropped_messages"] = dropped_messages_;
    (*j)["cache_event_messages"] = cache_events_->published();
    (*j)["cache_event_messages_lost"] = cache_events_->lost();
    (*j)["worker_request_states"] = worker_->worker_request_states();
    (*j)["scheduler_overhead_p50"] = ov.share_p50;
    (*j)["scheduler_overhead_p90"] = ov.share_p90;
    (*j)["scheduler_gap_us_p50"] = ov.gap_us_p50;
    (*j)["step_us_p50"] = ov.step_us_p50;
    (*j)["overhead_samples"] = ov.samples;
  };
  sinks.add_server_info = [this](nlohmann::json* j) {
    (*j)["scheduler"]["parameters"] = params().Snapshot();
    // The machine's CPU features and the kernels and GEMM core type a worker here runs with (the
    // worker logs the same line at start-up; the choice depends only on the CPU).
    (*j)["system_info"] = kernels::SystemInfo();
  };
  RS_ASSIGN_OR_RETURN(service_, SchedulerService::Create(std::move(o), worker_.get(),
                                                         [tok](std::span<const int32_t> ids) {
                                                           return tok->DecodeWindow(ids, true);
                                                         },
                                                         std::move(sinks)));
  transport::ChannelOptions event_opts = opts;
  event_opts.block_when_full = false;  // a slow router loses events (and sees the gap); serving never waits
  RS_ASSIGN_OR_RETURN(auto event_pub,
                      transport::Publisher::Create(ResolveTopic(transport::topics::kCacheEvents), event_opts));
  cache_events_ = std::make_unique<CacheEventPublisher>(std::move(event_pub));
  service_->set_cache_events(cache_events_.get());
  return Status::Ok();
}

Status SchedulerNode::OnActivate() {
  loop_.Start(waiter_.get(), [this] { Loop(); });
  return Status::Ok();
}

Status SchedulerNode::OnDeactivate() {
  loop_.Stop();
  worker_connected_.store(false);
  return Status::Ok();
}

Status SchedulerNode::OnCleanup() {
  service_.reset();
  cache_events_.reset();  // after the service: its cache reports to it
  worker_.reset();
  waiter_.reset();
  requests_.reset();
  control_.reset();
  out_.reset();
  control_reply_.reset();
  tokenizer_.reset();
  return Status::Ok();
}

// ---- the loop ------------------------------------------------------------------------

void SchedulerNode::Loop() {
  LoopUntilStopped();
  service_->Stop();
}

void SchedulerNode::LoopUntilStopped() {
  while (loop_.running()) {
    DrainRequests();
    DrainControl();
    if (worker_->TakeWorkerLost()) service_->WorkerLost();
    const bool connected = worker_->WorkerConnected();
    worker_connected_.store(connected);  // read by Ready() from the status thread
    // No worker (it died and its successor has not subscribed yet): hold the requests instead of
    // failing each batch at once; past worker_wait_s without one, steps run again and fail with
    // "the worker is gone", so that no request waits forever.
    if (connected) {
      worker_absent_since_.reset();
    } else if (!service_->scheduler().no_requests()) {
      const auto now = std::chrono::steady_clock::now();
      if (!worker_absent_since_) worker_absent_since_ = now;
      if (now - *worker_absent_since_ < std::chrono::duration<double>(params().GetDouble("worker_wait_s"))) {
        waiter_->Wait(std::chrono::milliseconds(10));
        continue;
      }
    }
    bool did_work = false;
    Status s = service_->Step(&did_work);
    if (!s.ok()) {
      LOG(ERROR) << name() << ": scheduler step failed: " << s.ToString();
      did_work = false;
    }
    cache_events_->Flush();  // this iteration's cache changes, in one message
    // Idle: block until a request or control message arrives (no busy loop).
    if (!did_work && service_->scheduler().idle()) {
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
          service_->Abort((*m)->rid);
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
  sched::TokenizedRequest g;
  DecodeTokenizedRequest(*v, &g);
  service_->Submit(std::move(g));
}

void SchedulerNode::SendOutputs(const sched::BatchTokenIdOut& batch) {
  // The cache changes behind these outputs go first: a router that has seen a request finish
  // knows what its group cached from it.
  cache_events_->Flush();
  if (batch.outputs.empty()) return;
  const size_t bytes = BatchTokenIdOutBytes(batch);
  auto chunk = out_->Loan(bytes);
  if (!chunk.ok()) {
    LOG(ERROR) << name() << ": cannot send outputs of " << batch.outputs.size()
               << " requests: " << chunk.status().ToString();
    return;
  }
  if (Status s = EncodeBatchTokenIdOut(batch, *chunk, bytes); !s.ok()) {
    out_->Release(*chunk);
    LOG(ERROR) << name() << ": " << s.ToString();
    return;
  }
  out_->Publish(*chunk);
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
  service_->HandleControl(req);
}

void SchedulerNode::Reply(uint64_t call_id, control::ControlReply reply) {
  reply.set_call_id(call_id);
  // Named by namespace outside the default one: a data-parallel router tells its groups apart.
  reply.set_responder(ns() == NodeContext{}.ns ? name() : ns() + "/" + name());
  if (Status s = transport::PublishControl(*control_reply_, reply); !s.ok())
    LOG(ERROR) << name() << ": cannot reply to a control call: " << s.ToString();
}

RADIXSERVE_DEFINE_NODE_COMPONENT("scheduler", "SGLang-style scheduler loop with policy and cache plugins", SchedulerNode)

}  // namespace radixserve::nodes
