// TokenizedRequest: one request as the scheduler receives it. Plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include "core/request/request_spec.h"

namespace radixserve::sched {

// One request as the scheduler receives it: one choice of an api::GenerateRequest, tokenized
// (the wire form is transport::TokenizedRequestMsg).
struct TokenizedRequest {
  uint64_t rid = 0;
  std::vector<int32_t> input_ids;
  RequestSpec spec;  // the choice's GenerateRequest::spec
};

}  // namespace radixserve::sched
