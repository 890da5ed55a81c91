// RouDi sizing: the largest hot-path message a launch plan can send, from
// the model (context length, vocabulary) and the scheduler's limits, and the
// iceoryx memory-pool configuration that carries it.
//
// Every bound is a worst case the pipeline can reach, not a typical size
// (a message that does not fit a chunk is dropped, and a dropped output is a
// lost response). With R = max_running_requests, C = the served context
// (the scheduler's `context` parameter, model::ServedContext; capped by
// max_total_tokens where one request's slots are meant),
// P = tokens of one prefill batch (chunked_prefill_size when chunking, else
// max(max_prefill_tokens, C); at most max_total_tokens), T = P + R:
//   TokenizedRequest  a C-token prompt with the api's most stop ids/strings
//   ForwardBatch      R request entries, T input ids and cache slots, and for each of
//                     min(R, P) new requests a C-slot prefix patch and a C-token history
//                     (shared radix prefixes are repeated per request, so KV size does not cap them),
//                     at most sched::kMaxBatchPrefixIds + 2 C + C of each (admission's cap)
//   ForwardResult     R next ids and logprobs with 20 top logprobs each
//   BatchTokenIdOut   R entries; unsent output ids are distinct KV tokens, so at most
//   BatchStrOut       U = min(R*C, max_total_tokens) ids in total (+5 context ids per entry),
//                     each with a logprob and 20 top alternatives;
//                     text is ids times the longest vocabulary piece, plus a stop string each
//   Activations       (pipeline stages only) T tokens of the model's hidden width in floats
// The byte size of each message for given array counts is the message's own
// Bytes() (transport/messages.h), the function its writer uses.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/util/status.h"
#include "launch/launch_plan.h"
#include "transport/roudi_process.h"

namespace radixserve::launch {

struct PipelineLimits {
  std::string model;             // "" = the built-in default model
  int64_t vocab_size = 0;        // 0 when unknown
  int64_t max_token_bytes = 0;   // longest token text in the vocabulary
  int64_t context_length = 0;   // served context (model::ServedContext)
  int64_t max_running_requests = 0;
  int64_t chunked_prefill_size = 0;  // <= 0: no chunking
  int64_t max_prefill_tokens = 0;
  int64_t max_total_tokens = 0;
  int64_t hidden_dim = 0;         // the model's embedding width (pipeline stages pass [tokens][dim])
  bool pipeline_stages = false;   // a worker has pp_size > 1
};

// The scheduler node's limits (its parameters, else SchedulerConfig defaults) and the model's
// context and vocabulary (the scheduler's "model", else any node's; the built-in tiny model's
// sizes when none is set). Errors name the parameter or the model file.
Result<PipelineLimits> PipelineLimitsFromPlan(const LaunchPlan& plan);

// Fills the model fields of *limits from a GGUF file, with the served context for the `context`
// parameter (0: the default).
Status ReadModelLimits(const std::string& gguf_path, int64_t context, PipelineLimits* limits);

struct MessageBounds {
  uint64_t tokenized_request = 0;
  uint64_t forward_batch = 0;
  uint64_t forward_result = 0;
  uint64_t batch_token_id_out = 0;
  uint64_t batch_str_out = 0;
  uint64_t activations = 0;  // T tokens of hidden state; 0 without pipeline stages
  uint64_t largest() const;
  std::string ToString() const;
};

MessageBounds ComputeMessageBounds(const PipelineLimits& limits);

// PipelineRouDiConfig(largest message) for the plan; OutOfRange when a message would exceed 4 GiB.
// *bounds (optional) receives the per-message sizes, e.g. for a log line.
Result<transport::RouDiConfig> RouDiConfigForPlan(const LaunchPlan& plan, MessageBounds* bounds = nullptr);

}  // namespace radixserve::launch
