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

// Extra per-batch data that travels with a ForwardBatch but is not part of the scheduler's struct.
struct BatchExtras {
  std::vector<uint64_t> released_rids;
  // For reqs[i]: tokens the worker has not seen (history_begin[i], history_len[i] into history).
  std::vector<int32_t> history;
  std::vector<uint32_t> history_begin, history_len;
  void Clear() {
    released_rids.clear();
    history.clear();
    history_begin.clear();
    history_len.clear();
  }
};

size_t ForwardBatchBytes(const sched::ForwardBatch& b, const BatchExtras& extras);
// Writes the message into `buf` (capacity `cap`); OutOfRange when it does not fit.
Status EncodeForwardBatch(const sched::ForwardBatch& b, const BatchExtras& extras, void* buf, size_t cap);
// Reads a validated message into *b and *extras (reusing their storage).
void DecodeForwardBatch(const transport::ForwardBatchMsg* m, sched::ForwardBatch* b, BatchExtras* extras);

size_t ForwardResultBytes(const sched::ForwardResult& r, const Status& status);
Status EncodeForwardResult(const sched::ForwardResult& r, const Status& status, void* buf, size_t cap);
// Reads a validated message; returns the worker's status (its error, if the batch failed).
Status DecodeForwardResult(const transport::ForwardResultMsg* m, sched::ForwardResult* r);

}  // namespace radixserve::nodes
