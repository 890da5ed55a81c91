// ReqToTokenPool: one row of KV slot indices per running request
// (row r, column j = KV slot of token j of the request in row r).
// Not thread-safe: owned and used by the scheduler thread only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace radixserve::sched {

class ReqToTokenPool {
 public:
  ReqToTokenPool(int32_t num_rows, int32_t max_context_len);

  // Returns a free row index, or -1 when every row is taken.
  int32_t Alloc();
  void Free(int32_t row);

  std::span<int32_t> Row(int32_t row) {
    return {table_.data() + static_cast<size_t>(row) * max_context_len_, static_cast<size_t>(max_context_len_)};
  }
  std::span<const int32_t> Row(int32_t row) const {
    return {table_.data() + static_cast<size_t>(row) * max_context_len_, static_cast<size_t>(max_context_len_)};
  }

  int32_t size() const { return num_rows_; }
  int32_t available_size() const { return static_cast<int32_t>(free_rows_.size()); }
  int32_t max_context_len() const { return max_context_len_; }
  bool is_free(int32_t row) const { return row_free_[row] != 0; }
  void Clear();

 private:
  int32_t num_rows_;
  int32_t max_context_len_;
  std::vector<int32_t> table_;
  std::vector<int32_t> free_rows_;  // stack; lowest index on top after Clear()
  std::vector<uint8_t> row_free_;
};

}  // namespace radixserve::sched
