#include "nodes/worker/worker_node.h"

#include <glog/logging.h>

#include "core/grammar/grammar_cache.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/model/llama_model.h"
#include "core/model/model_backend.h"
#include "core/model/pipeline_stage.h"
#include "core/model/served_context.h"
#include "core/scheduler/scheduler_config.h"
#include "kernels/cpu/cpu_features.h"
#include "nodes/component.h"
#include "transport/messages.h"
#if RADIXSERVE_HAVE_CUDA
#include "nodes/worker/cuda_module.h"
#endif

namespace radixserve::nodes {

WorkerNode::WorkerNode(NodeContext ctx) : Node(std::move(ctx)) {
  const sched::SchedulerConfig d;  // its sizes must match the scheduler's: the same defaults
  params().DeclareString("model", "", "GGUF model file", {}, true);
  params().DeclareString("device", "cpu", "where the model runs: cpu, or cuda (the first GPU; needs a CUDA build)",
                         {"cpu", "cuda"}, true);
  params().DeclareBool("cuda_graphs", false,
                       "with device cuda: replay decode steps from CUDA graphs (model::CudaModelOptions::decode_graphs)",
                       true);
  params().DeclareInt("threads", 2, 1, 1024, "compute threads", true);
  params().DeclareInt("context", 0, 0, int64_t(1) << 30, "served context in tokens: 0 = the model's, at most 4096 (model::kDefaultServedContext)", true);
  params().DeclareString("kv_type", "auto",
                         "KV cache element type: auto (f32 on the CPU, f16 on CUDA), f32, f16, q8_0 or q4_0 (CPU only; "
                         "the model's head_dim a multiple of 32)",
                         {"auto", "f32", "f16", "q8_0", "q4_0"}, true);
  params().DeclareInt("kv_slots", d.max_total_tokens, 64, int64_t(1) << 32,
                      "KV slots (at least the scheduler's max_total_tokens + page_size)", true);
  params().DeclareInt("max_running_requests", d.max_running_requests, 1, 65536, "req-to-token rows (the scheduler's)", true);
  params().DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
  params().DeclareInt("grammar_cache_size", 64, 1, 4096, "compiled grammars kept for structured output (LRU)", true);
  params().DeclareInt("tp_size", 1, 1, 64, "tensor-parallel ranks: workers that each hold a shard of the model", true);
  params().DeclareInt("tp_rank", 0, 0, 63, "this worker's tensor-parallel rank (rank 0 answers the scheduler)", true);
  params().DeclareString("tp_group", "",
                         "name of the ranks' shared-memory segment (empty: radixserve_tp_<namespace>)", {}, true);
  params().DeclareInt("tp_timeout_ms", 30000, 10, 3600000,
                      "how long a rank waits for the others in an all-reduce before the step fails", true);
  params().DeclareInt("pp_size", 1, 1, 64, "pipeline stages: workers that each hold a contiguous range of layers", true);
  params().DeclareInt("pp_rank", 0, 0, 63, "this worker's pipeline stage (the last one answers the scheduler)", true);
}

WorkerNode::~WorkerNode() { Shutdown(); }

Result<std::unique_ptr<model::ModelBackend>> WorkerNode::LoadBackend(std::shared_ptr<const gguf::GgufFile> file,
                                                                     const model::ModelOptions& options,
                                                                     int64_t num_slots) {
  if (params().GetString("device") == "cuda") {
    if (options.collective != nullptr || options.layer_begin != 0 || options.layer_end != -1)
      return Status::Unsupported("device:=cuda runs a whole model in one worker: no tp_size or pp_size above 1 yet");
#if RADIXSERVE_HAVE_CUDA
    CudaBackendOptions co;
    co.num_slots = num_slots;
    co.kv_type = options.kv_type;
    co.decode_graphs = params().GetBool("cuda_graphs");
    auto m = LoadCudaBackend(std::move(file), co);
    if (!m.ok()) return Status(m.status().code(), "device:=cuda: " + m.status().message());
    return std::move(m).value();
#else
    return Status::Unsupported("device:=cuda: this radixserve was built without the CUDA backend (no nvcc at build "
                               "time; README, section GPU)");
#endif
  }
  // What runs the model on this machine: CPU features, kernel set, GEMM library and its core type.
  LOG(INFO) << name() << ": " << kernels::SystemInfo();
  RS_ASSIGN_OR_RETURN(auto model, model::LlamaModel::Load(std::move(file), options));
  return model::MakeCpuBackend(std::shared_ptr<model::LlamaModel>(std::move(model)), num_slots);
}

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
  const int pp_size = static_cast<int>(params().GetInt("pp_size")), pp_rank = static_cast<int>(params().GetInt("pp_rank"));
  if (pp_rank >= pp_size)
    return Status::InvalidArgument("pp_rank " + std::to_string(pp_rank) + " is not below pp_size " + std::to_string(pp_size));
  if (tp_size > 1 && pp_size > 1)
    return Status::Unsupported("tensor and pipeline parallelism together (tp_size " + std::to_string(tp_size) +
                               ", pp_size " + std::to_string(pp_size) + ") are not supported; use one of them");
  if (pp_size > 1) {
    RS_ASSIGN_OR_RETURN(model::LlamaConfig config, model::LlamaConfig::FromGguf(*shared));
    RS_ASSIGN_OR_RETURN(model::StageLayers layers, model::PipelineStageLayers(config.num_layers, pp_rank, pp_size));
    mo.layer_begin = layers.begin;
    mo.layer_end = layers.end;
    LOG(INFO) << name() << ": pipeline stage " << pp_rank << " of " << pp_size << ", layers [" << layers.begin << ", "
              << layers.end << ") of " << config.num_layers;
  }
  if (tp_size > 1) {
    std::string group = params().GetString("tp_group");
    if (group.empty()) group = ns();
    RS_ASSIGN_OR_RETURN(collective_, model::ShmCollective::Open(group, tp_rank, tp_size,
                                                                std::chrono::milliseconds(params().GetInt("tp_timeout_ms"))));
    mo.collective = collective_.get();
    LOG(INFO) << name() << ": tensor-parallel rank " << tp_rank << " of " << tp_size << " (group " << group << ")";
  }
  RS_ASSIGN_OR_RETURN(int32_t ctx, model::ServedContext(*shared, params().GetInt("context")));
  mo.context = ctx;  // phi3's LongRoPE factors follow it, as llama.cpp's follow n_ctx
  RS_ASSIGN_OR_RETURN(mo.kv_type, model::ParseKvType(params().GetString("kv_type"), params().GetString("device") == "cuda"));
  const WorkerShape shape = WorkerShape::For(params().GetInt("kv_slots"),
                                             static_cast<int32_t>(params().GetInt("max_running_requests")), ctx);
  RS_ASSIGN_OR_RETURN(std::unique_ptr<model::ModelBackend> backend, LoadBackend(shared, mo, shape.num_slots));
  LOG(INFO) << name() << ": model runs on " << backend->Describe();
  RS_ASSIGN_OR_RETURN(worker_, ModelWorker::Create(std::move(backend), shape.num_rows, shape.max_context_len));
  // min_new_tokens holds these back (EOS and end-of-turn tokens).
  std::vector<int32_t> eog;
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (auto id = shared->GetInt(key); id.ok()) eog.push_back(static_cast<int32_t>(*id));
  worker_->set_end_of_generation_ids(std::move(eog));
  // Structured output: the matcher reads the vocabulary's token bytes from the model's tokenizer.
  if (auto tok = Tokenizer::FromGguf(*shared); tok.ok()) {
    worker_->set_grammar_cache(std::make_shared<grammar::GrammarCache>(
        grammar::TokenVocabOf(**tok), static_cast<size_t>(params().GetInt("grammar_cache_size"))));
  } else {
    LOG(WARNING) << name() << ": no tokenizer in the model file (" << tok.status().message()
                 << "): requests with a response_format or grammar will fail";
  }
  handler_ = std::make_unique<BatchHandler>(worker_.get());
  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(in_, transport::Subscriber::Create(ResolveTopic(transport::topics::kForwardBatch), opts));
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  RS_RETURN_IF_ERROR(waiter_->Attach(*in_));
  // Every stage receives every batch; each after the first also its predecessor's activations.
  if (pp_rank > 0) {
    RS_ASSIGN_OR_RETURN(act_in_, transport::Subscriber::Create(
                                     ResolveTopic(transport::topics::kActivationsPrefix + std::to_string(pp_rank)), opts));
    RS_RETURN_IF_ERROR(waiter_->Attach(*act_in_));
  }
  if (pp_rank + 1 < pp_size) {
    RS_ASSIGN_OR_RETURN(act_out_, transport::Publisher::Create(
                                      ResolveTopic(transport::topics::kActivationsPrefix + std::to_string(pp_rank + 1)), opts));
  } else if (tp_rank == 0) {
    // Every rank runs every batch (their samplers stay in step); rank 0 of the last stage answers.
    RS_ASSIGN_OR_RETURN(out_, transport::Publisher::Create(ResolveTopic(transport::topics::kForwardResult), opts));
  }
  return Status::Ok();
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
  act_in_.reset();
  act_out_.reset();
  held_act_ = transport::Received();
  stage_batch_ = nullptr;
  handler_.reset();
  worker_.reset();
  collective_.reset();
  return Status::Ok();
}

void WorkerNode::Loop() {
  while (loop_.running()) {
    waiter_->Wait(std::chrono::milliseconds(200));
    if (act_in_) {
      RunStages();
      continue;
    }
    while (transport::Received r = in_->TryTake()) HandleBatch(r.data(), r.size());
  }
}

// A stage after the first: each batch waits for the previous stage's output for it. Batches and
// activations both arrive in batch order, so they pair up front to front.
void WorkerNode::RunStages() {
  while (true) {
    if (stage_batch_ == nullptr) {
      transport::Received r = in_->TryTake();
      if (!r) return;
      auto batch = handler_->Decode(r.data(), r.size());
      if (!batch.ok()) {  // the stages before dropped it too: no activations will come for it
        ++dropped_messages_;
        LOG(ERROR) << name() << ": dropped a malformed forward batch: " << batch.status().ToString();
        continue;
      }
      stage_batch_ = *batch;
    }
    if (!held_act_) held_act_ = act_in_->TryTake();
    if (!held_act_) return;
    auto act = transport::ValidateActivations(held_act_.data(), held_act_.size());
    if (!act.ok()) {
      ++dropped_messages_;
      LOG(ERROR) << name() << ": dropped malformed activations: " << act.status().ToString();
      held_act_ = transport::Received();
      continue;
    }
    const uint64_t id = stage_batch_->batch_id;
    if ((*act)->batch_id < id) {  // for a batch this stage never received (it was malformed here)
      held_act_ = transport::Received();
      continue;
    }
    Status s;
    std::span<const float> hidden;
    if ((*act)->batch_id > id) {  // the stage before never ran this batch: answer it with an error
      s = Status::Unavailable("pipeline stage " + std::to_string(params().GetInt("pp_rank") - 1) +
                              " sent no output for batch " + std::to_string(id));
    } else {
      s = ActivationsStatus(*act);
      hidden = transport::ArrayOf<float>(*act, (*act)->hidden);
    }
    RunStage(hidden, s);
    if ((*act)->batch_id == id) held_act_ = transport::Received();
    stage_batch_ = nullptr;
  }
}

void WorkerNode::RunStage(std::span<const float> hidden_in, Status upstream) {
  const sched::ForwardBatch& batch = *stage_batch_;
  Status s = upstream;
  if (s.ok()) {
    s = worker_->ForwardStage(batch, hidden_in, &hidden_, handler_->result());
  } else {
    worker_->ApplyReleases(batch);
  }
  auto outcome = handler_->Finish(std::move(s));
  if (!outcome.status.ok())
    LOG(ERROR) << name() << ": forward step " << batch.batch_id << " failed: " << outcome.status.ToString();
  if (act_out_) {
    SendActivations(batch.batch_id, outcome.status);
  } else if (out_) {
    Reply(*outcome.result, outcome.status);
  }
}

void WorkerNode::SendActivations(uint64_t batch_id, const Status& status) {
  const uint32_t dim = static_cast<uint32_t>(worker_->model().config().dim);
  Status sent = status;
  size_t bytes = ActivationsBytes(hidden_.size(), sent);
  auto chunk = act_out_->Loan(bytes);
  if (!chunk.ok()) {  // the batch still ends: the next stages pass its error on to the scheduler
    sent = Status(chunk.status().code(), "pipeline stage output for batch " + std::to_string(batch_id) + ": " +
                                             chunk.status().message());
    LOG(ERROR) << name() << ": " << sent.ToString();
    bytes = ActivationsBytes(0, sent);
    chunk = act_out_->Loan(bytes);
    if (!chunk.ok()) {
      LOG(ERROR) << name() << ": cannot pass batch " << batch_id << " on: " << chunk.status().ToString();
      return;
    }
  }
  if (Status s = EncodeActivations(batch_id, dim, hidden_, sent, *chunk, bytes); !s.ok()) {
    act_out_->Release(*chunk);
    LOG(ERROR) << name() << ": " << s.ToString();
    return;
  }
  act_out_->Publish(*chunk);
}

void WorkerNode::HandleBatch(const void* data, size_t size) {
  if (act_out_) {  // the first of several pipeline stages: it runs the batch and passes it on
    auto batch = handler_->Decode(data, size);
    if (!batch.ok()) {
      ++dropped_messages_;
      LOG(ERROR) << name() << ": dropped a malformed forward batch: " << batch.status().ToString();
      return;
    }
    stage_batch_ = *batch;
    RunStage({}, Status::Ok());
    stage_batch_ = nullptr;
    return;
  }
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
