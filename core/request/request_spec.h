// RequestSpec: what a client asked of one generation, as far as the engine
// past the HTTP layer needs it: how to sample, when to stop, what to return,
// and how to schedule and cache it. The api parses it once
// (api::GenerateRequest::spec); each choice is handed on as a copy
// (sched::TokenizedRequest::spec), crosses the transport in one encode/decode
// pair (nodes/request_codec.cc) and ends in the scheduler's Req::spec. A new
// request field is added here, and in that codec when it must cross a process.
// Header-only, below core/api, core/scheduler and the transport: it includes
// only the sampling parameters and the grammar spec.
// Plain value type, thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/grammar/grammar_spec.h"
#include "core/sampling/sampling_params.h"

namespace radixserve {

struct RequestSpec {
  SamplingParams sampling;              // validated; sampling.logprobs = -1 when none asked
  std::vector<int32_t> stop_token_ids;
  std::vector<std::string> stop_strs;   // stop strings
  bool stream = false;
  bool return_logprob = false;          // logprobs of the chosen tokens
  int32_t top_logprobs_num = 0;         // alternatives per position (served only with return_logprob)
  // Scheduling: the priority (the HTTP server fills in the default class's number; empty, the
  // priority policy ranks the request last), the routing key ("" = none: the routing-key policy
  // groups requests by it) and the prefix-cache namespace ("" = shared; tenants that salt never
  // share entries).
  std::optional<int64_t> priority;
  std::string routing_key;
  std::string cache_salt;
  // The structured-output constraint, already validated by compiling it once (kNone: free output).
  grammar::GrammarSpec grammar;
};

}  // namespace radixserve
