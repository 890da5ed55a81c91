// Converts between a tokenized request and its shared-memory message
// (TokenizedRequestMsg): the api node encodes, the scheduler node decodes.
// Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/scheduler/scheduler.h"
#include "core/util/status.h"
#include "transport/messages.h"

namespace radixserve::nodes {

size_t TokenizedRequestBytes(const sched::TokenizedRequest& r);
// Writes the message into `buf` (capacity `cap`); OutOfRange when it does not fit.
Status EncodeTokenizedRequest(const sched::TokenizedRequest& r, double arrival_time, void* buf, size_t cap);
// Reads a validated message into *r (reusing its storage).
void DecodeTokenizedRequest(const transport::TokenizedRequestMsg* m, sched::TokenizedRequest* r);

}  // namespace radixserve::nodes
