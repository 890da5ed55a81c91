// Converts between the scheduler's ForwardBatch/ForwardResult and their
// shared-memory messages (ForwardBatchMsg / ForwardResultMsg). Used by the
// scheduler node (encode batch, decode result) and the worker node (decode
// batch, encode result). Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/scheduler/worker.h"
#include "core/util/status.h"
#include "transport/messages.h"

namespace radixserve::nodes {

size_t ForwardBatchBytes(const sched::ForwardBatch& b);
// Writes the message into `buf` (capacity `cap`); OutOfRange when it does not fit.
Status EncodeForwardBatch(const sched::ForwardBatch& b, void* buf, size_t cap);
// Reads a validated message into *b (reusing its storage).
void DecodeForwardBatch(const transport::ForwardBatchMsg* m, sched::ForwardBatch* b);

size_t ForwardResultBytes(const sched::ForwardResult& r, const Status& status);
Status EncodeForwardResult(const sched::ForwardResult& r, const Status& status, void* buf, size_t cap);
// Reads a validated message; returns the worker's status (its error, if the batch failed).
Status DecodeForwardResult(const transport::ForwardResultMsg* m, sched::ForwardResult* r);

// A pipeline stage's output (ActivationsMsg): `hidden` is [tokens][dim]; a failed step sends
// `status` and no floats.
size_t ActivationsBytes(size_t floats, const Status& status);
Status EncodeActivations(uint64_t batch_id, uint32_t dim, std::span<const float> hidden, const Status& status,
                         void* buf, size_t cap);
// The stage's status as sent (its error, if its step failed).
Status ActivationsStatus(const transport::ActivationsMsg* m);

}  // namespace radixserve::nodes
