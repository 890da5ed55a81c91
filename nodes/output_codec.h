// Writes the scheduler's output batch as its shared-memory message
// (BatchTokenIdOutMsg), which the detokenizer reads. Stateless; thread-safe.
#pragma once

#include <cstddef>

#include "core/scheduler/output_streamer.h"
#include "core/util/status.h"
#include "transport/messages.h"

namespace radixserve::nodes {

size_t BatchTokenIdOutBytes(const sched::BatchTokenIdOut& batch);
// Writes the message into `buf` (capacity `cap`); OutOfRange when it does not fit.
Status EncodeBatchTokenIdOut(const sched::BatchTokenIdOut& batch, void* buf, size_t cap);

}  // namespace radixserve::nodes
