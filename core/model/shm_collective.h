// ShmCollective: the all-gather of tensor-parallel ranks that are separate
// processes on one machine, over a POSIX shared-memory segment the group
// names. Rank 0 creates the segment (replacing a stale one), the others open
// it, waiting for it up to their start wait.
//
// Each rank has two slots (alternating by call within a step) of `capacity`
// floats and a stamp per slot: a call writes its part, stamps it with
// (step, call), waits until every rank's slot carries the same stamp, copies
// the parts out and checks that no stamp moved while it read. A rank reuses a
// slot only after every rank has stamped the next call, so two slots need no
// further handshake. Larger parts go in chunks of rows. A rank
// that does not arrive within the timeout fails the call (the step), never
// hangs it; a restarted rank joins at the next step (BeginStep).
// Not thread-safe: one rank, one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/model/tensor_parallel.h"

namespace radixserve::model {

class ShmCollective final : public Collective {
 public:
  static constexpr int64_t kDefaultCapacity = 1 << 18;  // floats per slot (1 MiB)

  static constexpr std::chrono::seconds kDefaultStartWait{60};

  // `name`: the segment ("/radixserve_tp_<name>"); every rank of a group gives the same one.
  // `timeout`: how long a call waits for the other ranks; `start_wait`: how long a rank other
  // than 0 waits for rank 0's segment (rank 0 may start later, or load slowly).
  static Result<std::unique_ptr<ShmCollective>> Open(const std::string& name, int rank, int size,
                                                     std::chrono::milliseconds timeout,
                                                     std::chrono::milliseconds start_wait = kDefaultStartWait,
                                                     int64_t capacity = kDefaultCapacity);
  ~ShmCollective() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Numbers the calls of one step (a forward batch): every rank passes the same id.
  // A rank other than 0 whose last call timed out looks for a new segment of a restarted rank 0.
  void BeginStep(uint64_t step) override;
  Status AllGather(const float* part, int64_t rows, int64_t cols, float* out) override;
  // Seconds spent in AllGather since the last Take (waiting for the other ranks included).
  double TakeSeconds();

 private:
  struct Segment;
  ShmCollective() = default;
  Status GatherChunk(const float* part, int64_t rows, int64_t cols, float* out);
  bool TryAttach();  // maps rank 0's segment if it is usable (and not the one mapped already)

  std::string path_;
  int rank_ = 0, size_ = 1;
  int64_t capacity_ = 0;
  std::chrono::milliseconds timeout_{0};
  Segment* seg_ = nullptr;
  size_t bytes_ = 0;
  uint64_t step_ = 0, call_ = 0;
  bool stale_ = false;
  double seconds_ = 0;
};

}  // namespace radixserve::model
