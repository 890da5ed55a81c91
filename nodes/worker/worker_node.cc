#include "nodes/worker/worker_node.h"

#include <glog/logging.h>

#include "core/model/llama_model.h"
#include "core/model/served_context.h"
#include "core/scheduler/scheduler_config.h"
#include "kernels/cpu/cpu_features.h"
#include "nodes/component.h"
#include "transport/messages.h"

namespace radixserve::nodes {

WorkerNode::WorkerNode(NodeContext ctx) : Node(std::move(ctx)) {
  const sched::SchedulerConfig d;  // its sizes must match the scheduler's: the same defaults
  params().DeclareString("model", "", "GGUF model file", {}, true);
  params().DeclareInt("threads", 2, 1, 1024, "compute threads", true);
  params().DeclareInt("context", 0, 0, int64_t(1) << 30, "served context in tokens: 0 = the model's, at most 4096 (model::kDefaultServedContext)", true);
  params().DeclareInt("kv_slots", d.max_total_tokens, 64, int64_t(1) << 32,
                      "KV slots (at least the scheduler's max_total_tokens + page_size)", true);
  params().DeclareInt("max_running_requests", d.max_running_requests, 1, 65536, "req-to-token rows (the scheduler's)", true);
  params().DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
  params().DeclareInt("tp_size", 1, 1, 64, "tensor-parallel ranks: workers that each hold a shard of the model", true);
  params().DeclareInt("tp_rank", 0, 0, 63, "this worker's tensor-parallel rank (rank 0 answers the scheduler)", true);
  params().DeclareString("tp_group", "",
                         "name of the ranks' shared-memory segment (empty: radixserve_tp_<namespace>)", {}, true);
  params().DeclareInt("tp_timeout_ms", 30000, 10, 3600000,
                      "how long a rank waits for the others in an all-reduce before the step fails", true);
}

WorkerNode::~WorkerNode() { Shutdown(); }

Status WorkerNode::OnConfigure() {
  std::string path = params().GetString("model");
  if (path.empty()) return Status::InvalidArgument("parameter 'model' is required");
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(path));
  std::shared_ptr<const gguf::GgufFile> shared(std::move(file));
  model::ModelOptions mo;
  mo.num_threads = static_cast<int>(params().GetInt("threads"));
  const int tp_size = static_cast<int>(params().GetInt("tp_size")), tp_rank = static_cast<int>(params().GetInt("tp_rank"));
  if (tp_rank >= tp_size)
    return Status::InvalidArgument("tp_rank " + std::to_string(tp_rank) + " is not below tp_size " + std::to_string(tp_size));
  if (tp_size > 1) {
    std::string group = params().GetString("tp_group");
    if (group.empty()) group = ns();
    RS_ASSIGN_OR_RETURN(collective_, model::ShmCollective::Open(group, tp_rank, tp_size,
                                                                std::chrono::milliseconds(params().GetInt("tp_timeout_ms"))));
    mo.collective = collective_.get();
    LOG(INFO) << name() << ": tensor-parallel rank " << tp_rank << " of " << tp_size << " (group " << group << ")";
  }
  // What runs the model on this machine: CPU features, kernel set, GEMM library and its core type.
  LOG(INFO) << name() << ": " << kernels::SystemInfo();
  RS_ASSIGN_OR_RETURN(auto model, model::LlamaModel::Load(shared, mo));
  RS_ASSIGN_OR_RETURN(int32_t ctx, model::ServedContext(*shared, params().GetInt("context")));
  std::shared_ptr<model::LlamaModel> m(std::move(model));
  RS_ASSIGN_OR_RETURN(worker_, ModelWorker::Create(m, WorkerShape::For(params().GetInt("kv_slots"),
                                                                        static_cast<int32_t>(params().GetInt("max_running_requests")),
                                                                        ctx)));
  // min_new_tokens holds these back (EOS and end-of-turn tokens).
  std::vector<int32_t> eog;
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (auto id = shared->GetInt(key); id.ok()) eog.push_back(static_cast<int32_t>(*id));
  worker_->set_end_of_generation_ids(std::move(eog));
  handler_ = std::make_unique<BatchHandler>(worker_.get());
  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(in_, transport::Subscriber::Create(ResolveTopic(transport::topics::kForwardBatch), opts));
  // Every rank runs every batch (their samplers stay in step); rank 0 alone answers.
  if (tp_rank == 0) {
    RS_ASSIGN_OR_RETURN(out_, transport::Publisher::Create(ResolveTopic(transport::topics::kForwardResult), opts));
  }
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  return waiter_->Attach(*in_);
}

Status WorkerNode::OnActivate() {
  loop_.Start(waiter_.get(), [this] { Loop(); });
  return Status::Ok();
}

Status WorkerNode::OnDeactivate() {
  loop_.Stop();
  return Status::Ok();
}

Status WorkerNode::OnCleanup() {
  waiter_.reset();
  in_.reset();
  out_.reset();
  handler_.reset();
  worker_.reset();
  collective_.reset();
  return Status::Ok();
}

void WorkerNode::Loop() {
  while (loop_.running()) {
    waiter_->Wait(std::chrono::milliseconds(200));
    while (transport::Received r = in_->TryTake()) HandleBatch(r.data(), r.size());
  }
}

void WorkerNode::HandleBatch(const void* data, size_t size) {
  auto outcome = handler_->Handle(data, size);
  if (!outcome.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed forward batch: " << outcome.status().ToString();
    return;
  }
  if (!outcome->status.ok())
    LOG(ERROR) << name() << ": forward step " << outcome->result->batch_id << " failed: " << outcome->status.ToString();
  if (out_) Reply(*outcome->result, outcome->status);
}

void WorkerNode::Reply(const sched::ForwardResult& result, const Status& status) {
  size_t bytes = ForwardResultBytes(result, status);
  auto chunk = out_->Loan(bytes);
  if (!chunk.ok()) {
    LOG(ERROR) << name() << ": cannot answer batch " << result.batch_id << ": " << chunk.status().ToString();
    return;
  }
  if (Status s = EncodeForwardResult(result, status, *chunk, bytes); !s.ok()) {
    out_->Release(*chunk);
    LOG(ERROR) << name() << ": " << s.ToString();
    return;
  }
  out_->Publish(*chunk);
}

RADIXSERVE_DEFINE_NODE_COMPONENT("worker", "runs forward steps of the model on the CPU", WorkerNode)

}  // namespace radixserve::nodes
