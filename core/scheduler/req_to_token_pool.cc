#include "core/scheduler/req_to_token_pool.h"

#include <glog/logging.h>

namespace radixserve::sched {

ReqToTokenPool::ReqToTokenPool(int32_t num_rows, int32_t max_context_len)
    : num_rows_(num_rows),
      max_context_len_(max_context_len),
      table_(static_cast<size_t>(num_rows) * max_context_len, 0) {
  Clear();
}

void ReqToTokenPool::Clear() {
  free_rows_.clear();
  for (int32_t i = num_rows_ - 1; i >= 0; --i) free_rows_.push_back(i);
  row_free_.assign(num_rows_, 1);
}

int32_t ReqToTokenPool::Alloc() {
  if (free_rows_.empty()) return -1;
  int32_t row = free_rows_.back();
  free_rows_.pop_back();
  row_free_[row] = 0;
  return row;
}

void ReqToTokenPool::Free(int32_t row) {
  CHECK(row >= 0 && row < num_rows_) << "req_to_token row out of range: " << row;
  CHECK(!row_free_[row]) << "double free of req_to_token row " << row;
  row_free_[row] = 1;
  free_rows_.push_back(row);
}

}  // namespace radixserve::sched
