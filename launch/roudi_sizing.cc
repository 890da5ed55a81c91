#include "core/model/served_context.h"
#include "launch/roudi_sizing.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/api/generate_request.h"
#include "core/gguf/gguf_reader.h"
#include "core/builtin_model/builtin_model.h"
#include "core/scheduler/output_streamer.h"
#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/worker.h"
#include "transport/messages.h"

namespace radixserve::launch {
namespace {


// The incremental detokenizer's context tokens before the first output (SCHEDULER_SPEC 7.5).
constexpr uint64_t kSurroundingTokens = sched::kDetokenizerContextTokens;
// Bytes per token when the vocabulary is unknown: generous for any real tokenizer.
constexpr int64_t kDefaultTokenBytes = 64;

Status IntParam(const PlannedNode* n, const char* key, int64_t* out) {
  if (!n) return Status::Ok();
  std::string text = n->Param(key);
  if (text.empty()) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return Status::InvalidArgument(n->name + " parameter '" + key + "' = '" + text + "' is not an integer");
  *out = v;
  return Status::Ok();
}

}  // namespace

Status ReadModelLimits(const std::string& gguf_path, int64_t context, PipelineLimits* limits) {
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(gguf_path));
  RS_ASSIGN_OR_RETURN(limits->context_length, model::ServedContext(*file, context));
  limits->model = gguf_path;
  auto tokens = file->GetStringArray("tokenizer.ggml.tokens");
  if (tokens.ok()) {
    limits->vocab_size = static_cast<int64_t>(tokens->size());
    size_t longest = 0;
    for (const auto& t : *tokens) longest = std::max(longest, t.size());
    limits->max_token_bytes = static_cast<int64_t>(longest);
  } else if (const gguf::TensorInfo* e = file->FindTensor("token_embd.weight"); e && e->dims.size() == 2) {
    limits->vocab_size = static_cast<int64_t>(e->dims[1]);
    limits->max_token_bytes = kDefaultTokenBytes;
  } else {
    return Status::Corrupt(gguf_path + ": neither tokenizer.ggml.tokens nor token_embd.weight gives the vocabulary");
  }
  if (const gguf::TensorInfo* e = file->FindTensor("token_embd.weight"); e && !e->dims.empty())
    limits->hidden_dim = static_cast<int64_t>(e->dims[0]);
  return Status::Ok();
}

Result<PipelineLimits> PipelineLimitsFromPlan(const LaunchPlan& plan) {
  const sched::SchedulerConfig defaults;
  PipelineLimits l;
  l.max_running_requests = defaults.max_running_requests;
  l.chunked_prefill_size = defaults.chunked_prefill_size;
  l.max_prefill_tokens = defaults.max_prefill_tokens;
  l.max_total_tokens = defaults.max_total_tokens;
  auto schedulers = plan.NodesOf("scheduler");
  const PlannedNode* s = schedulers.empty() ? nullptr : schedulers.front();
  RS_RETURN_IF_ERROR(IntParam(s, "max_running_requests", &l.max_running_requests));
  RS_RETURN_IF_ERROR(IntParam(s, "chunked_prefill_size", &l.chunked_prefill_size));
  RS_RETURN_IF_ERROR(IntParam(s, "max_prefill_tokens", &l.max_prefill_tokens));
  RS_RETURN_IF_ERROR(IntParam(s, "max_total_tokens", &l.max_total_tokens));
  if (l.max_running_requests <= 0 || l.max_total_tokens <= 0 || l.max_prefill_tokens <= 0)
    return Status::InvalidArgument("max_running_requests, max_total_tokens and max_prefill_tokens must be positive");

  std::string model = s ? s->Param("model") : "";
  for (const auto& p : plan.processes)
    for (const auto& n : p.nodes)
      if (model.empty()) model = n.Param("model");
  // No model anywhere: the nodes will run the built-in one, so size for it.
  if (model.empty()) {
    RS_ASSIGN_OR_RETURN(model, builtin_model::EnsureDefaultModel());
  }
  for (const PlannedNode* w : plan.NodesOf("worker")) {
    int64_t pp = 1;
    RS_RETURN_IF_ERROR(IntParam(w, "pp_size", &pp));
    l.pipeline_stages |= pp > 1;
  }
  int64_t context = 0;
  RS_RETURN_IF_ERROR(IntParam(s, "context", &context));
  RS_RETURN_IF_ERROR(ReadModelLimits(model, context, &l));
  return l;
}

uint64_t MessageBounds::largest() const {
  return std::max({tokenized_request, forward_batch, forward_result, batch_token_id_out, batch_str_out, activations});
}

std::string MessageBounds::ToString() const {
  return "TokenizedRequest " + std::to_string(tokenized_request) + " B, ForwardBatch " +
         std::to_string(forward_batch) + " B, ForwardResult " + std::to_string(forward_result) +
         " B, BatchTokenIdOut " + std::to_string(batch_token_id_out) + " B, BatchStrOut " +
         std::to_string(batch_str_out) + " B" +
         (activations ? ", Activations " + std::to_string(activations) + " B" : std::string());
}

MessageBounds ComputeMessageBounds(const PipelineLimits& l) {
  const api::ApiLimits api;
  const uint64_t R = static_cast<uint64_t>(l.max_running_requests);
  const uint64_t K = static_cast<uint64_t>(l.max_total_tokens);
  const uint64_t C = static_cast<uint64_t>(l.context_length);
  const uint64_t Cslots = std::min(C, K);  // one request's distinct KV slots
  uint64_t P = l.chunked_prefill_size > 0 ? static_cast<uint64_t>(l.chunked_prefill_size)
                                          : std::max<uint64_t>(static_cast<uint64_t>(l.max_prefill_tokens), C);
  P = std::min(P, K);
  const uint64_t T = P + R;               // a prefill chunk plus mixed-in decode tokens
  const uint64_t Bp = std::min(R, P);     // requests of one prefill batch: each extends >= 1 token
  const uint64_t U = std::min(R * C, K);  // unsent output ids of all requests: distinct KV tokens
  const uint64_t token_bytes = static_cast<uint64_t>(std::max<int64_t>(l.max_token_bytes, 1));
  const uint64_t stop_bytes = static_cast<uint64_t>(api.max_stop_string_bytes);

  MessageBounds b;
  const uint64_t Top = U * transport::kMaxTopLogprobs;  // alternatives of the unsent output ids
  b.tokenized_request = transport::TokenizedRequestMsg::Bytes({.input_ids = C,
                                                               .stop_token_ids = uint64_t(api.max_stop_token_ids),
                                                               .stop_str_bytes = uint64_t(api.max_stop_strings) * stop_bytes,
                                                               .stop_strs = uint64_t(api.max_stop_strings),
                                                               .cache_salt_bytes = uint64_t(api.max_key_bytes),
                                                               .routing_key_bytes = uint64_t(api.max_key_bytes),
                                                               .grammar_bytes = uint64_t(api.grammar.max_source_bytes)});
  // Prefix patches and histories: kMaxBatchPrefixIds for the new requests, plus a first request
  // admitted whole past it and a chunked request's row resynced after its chunk's cache insert.
  const uint64_t prefix_ids = uint64_t(sched::kMaxBatchPrefixIds) + 2 * Cslots + C;
  b.forward_batch = transport::ForwardBatchMsg::Bytes(
      {.reqs = R, .tokens = T, .prefix_slots = std::min(Bp * Cslots, prefix_ids), .released_rids = R,
       .history_ids = std::min(Bp * C, prefix_ids),
       .grammar_bytes = sched::kMaxBatchGrammarBytes + uint64_t(api.grammar.max_source_bytes)});
  b.forward_result = transport::ForwardResultMsg::Bytes({.reqs = R,
                                                         .logprobs = R,
                                                         .top = R * transport::kMaxTopLogprobs,
                                                         .error_bytes = transport::ForwardResultMsg::kMaxErrorBytes});
  b.batch_token_id_out = transport::BatchTokenIdOutMsg::Bytes({.entries = R,
                                                               .ids = U + kSurroundingTokens * R,
                                                               .out_ids = U,
                                                               .logprobs = U,
                                                               .text_bytes = R * stop_bytes,
                                                               .top = Top});
  b.batch_str_out = transport::BatchStrOutMsg::Bytes(
      {.entries = R,
       .ids = U,
       .logprobs = U,
       .text_bytes = (U + kSurroundingTokens * R) * token_bytes + R * stop_bytes,
       .top = Top});
  if (l.pipeline_stages)
    b.activations = transport::ActivationsMsg::Bytes(
        {.floats = T * static_cast<uint64_t>(l.hidden_dim), .error_bytes = transport::ActivationsMsg::kMaxErrorBytes});
  return b;
}

Result<transport::RouDiConfig> RouDiConfigForPlan(const LaunchPlan& plan, MessageBounds* bounds) {
  RS_ASSIGN_OR_RETURN(PipelineLimits limits, PipelineLimitsFromPlan(plan));
  // Readers reject arrays past the transport's limits, so such a pipeline could never run.
  if (limits.max_running_requests > transport::kMaxRequestsPerBatch)
    return Status::OutOfRange("max_running_requests " + std::to_string(limits.max_running_requests) +
                              " exceeds the transport's " + std::to_string(transport::kMaxRequestsPerBatch) +
                              " requests per batch");
  MessageBounds b = ComputeMessageBounds(limits);
  if (bounds) *bounds = b;
  // Leave room for rounding to 8 inside PipelineRouDiConfig.
  if (b.largest() > UINT32_MAX - 8)
    return Status::OutOfRange("the largest pipeline message would be " + std::to_string(b.largest()) +
                              " bytes (" + b.ToString() +
                              "); lower max_running_requests, max_total_tokens or chunked_prefill_size");
  return transport::PipelineRouDiConfig(static_cast<uint32_t>(b.largest()));
}

}  // namespace radixserve::launch
