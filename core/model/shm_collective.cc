#include "core/model/shm_collective.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace radixserve::model {

namespace {
constexpr uint64_t kMagic = 0x5253545030303031ull;  // "RSTP0001"
using Clock = std::chrono::steady_clock;

struct Header {
  std::atomic<uint64_t> magic;  // set last by the creator
  int32_t size;
  int32_t creator_pid;
  int64_t capacity;
};

size_t SegmentBytes(int size, int64_t capacity) {
  return sizeof(Header) + 2 * size * sizeof(std::atomic<uint64_t>) + 2 * size * capacity * sizeof(float);
}

uint64_t Stamp(uint64_t step, uint64_t call) { return (step << 24) | ((call + 1) & 0xffffff); }
}  // namespace

// The mapped segment: the header, then stamps [2][size], then data [2][size][capacity].
struct ShmCollective::Segment {
  Header header;
  std::atomic<uint64_t>* stamps() { return reinterpret_cast<std::atomic<uint64_t>*>(this + 1); }
  float* data(int size) { return reinterpret_cast<float*>(stamps() + 2 * size); }
};

Result<std::unique_ptr<ShmCollective>> ShmCollective::Open(const std::string& name, int rank, int size,
                                                           std::chrono::milliseconds timeout,
                                                           std::chrono::milliseconds start_wait, int64_t capacity) {
  if (size < 2 || rank < 0 || rank >= size)
    return Status::InvalidArgument("tensor-parallel rank " + std::to_string(rank) + " of " + std::to_string(size));
  if (name.empty() || name.find('/') != std::string::npos)
    return Status::InvalidArgument("tensor-parallel group name '" + name + "' must be non-empty without '/'");
  std::unique_ptr<ShmCollective> c(new ShmCollective());
  c->path_ = "/radixserve_tp_" + name;
  c->rank_ = rank;
  c->size_ = size;
  c->capacity_ = capacity;
  c->timeout_ = timeout;
  c->bytes_ = SegmentBytes(size, capacity);
  const auto deadline = Clock::now() + start_wait;
  if (rank == 0) {
    ::shm_unlink(c->path_.c_str());  // a stale group's segment: the new one replaces it
    int fd = ::shm_open(c->path_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) return Status::IOError("cannot create " + c->path_ + ": " + std::strerror(errno));
    if (::ftruncate(fd, static_cast<off_t>(c->bytes_)) != 0) {
      ::close(fd);
      return Status::ResourceExhausted("cannot size " + c->path_ + " to " + std::to_string(c->bytes_) + " bytes");
    }
    void* p = ::mmap(nullptr, c->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return Status::IOError("cannot map " + c->path_ + ": " + std::strerror(errno));
    c->seg_ = static_cast<Segment*>(p);
    c->seg_->header.size = size;
    c->seg_->header.creator_pid = ::getpid();
    c->seg_->header.capacity = capacity;
    for (int i = 0; i < 2 * size; ++i) new (&c->seg_->stamps()[i]) std::atomic<uint64_t>(0);
    c->seg_->header.magic.store(kMagic, std::memory_order_release);
    return c;
  }
  // The other ranks wait for rank 0's segment (a stale one, of a creator that is gone, is not it).
  while (!c->TryAttach()) {
    if (Clock::now() >= deadline)
      return Status::Unavailable("tensor-parallel rank 0 did not create " + c->path_ + " within " +
                                 std::to_string(start_wait.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return c;
}

bool ShmCollective::TryAttach() {
  int fd = ::shm_open(path_.c_str(), O_RDWR, 0600);
  if (fd < 0) return false;
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= bytes_)
    p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return false;
  auto* seg = static_cast<Segment*>(p);
  const bool usable = seg->header.magic.load(std::memory_order_acquire) == kMagic && seg->header.size == size_ &&
                      seg->header.capacity == capacity_ && ::kill(seg->header.creator_pid, 0) == 0 &&
                      (seg_ == nullptr || seg->header.creator_pid != seg_->header.creator_pid);
  if (!usable) {
    ::munmap(p, bytes_);
    return false;
  }
  if (seg_ != nullptr) ::munmap(seg_, bytes_);
  seg_ = seg;
  return true;
}

void ShmCollective::BeginStep(uint64_t step) {
  if (stale_ && TryAttach()) stale_ = false;
  step_ = step;
  call_ = 0;
}

ShmCollective::~ShmCollective() {
  if (seg_ != nullptr) ::munmap(seg_, bytes_);
  if (rank_ == 0) ::shm_unlink(path_.c_str());
}

Status ShmCollective::AllGather(const float* part, int64_t rows, int64_t cols, float* out) {
  if (cols > capacity_)
    return Status::InvalidArgument("a tensor-parallel part row of " + std::to_string(cols) + " floats exceeds the " +
                                   std::to_string(capacity_) + "-float slots");
  const auto start = Clock::now();
  const int64_t chunk = capacity_ / cols;  // rows per call
  Status s;
  for (int64_t done = 0; done < rows && s.ok(); done += chunk) {
    const int64_t n = std::min(chunk, rows - done);
    s = GatherChunk(part + done * cols, n, cols, out + done * cols * size_);
  }
  seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

Status ShmCollective::GatherChunk(const float* part, int64_t rows, int64_t cols, float* out) {
  const int parity = static_cast<int>(call_ % 2);
  const uint64_t stamp = Stamp(step_, call_++);
  std::atomic<uint64_t>* stamps = seg_->stamps() + parity * size_;
  float* slots = seg_->data(size_) + static_cast<int64_t>(parity) * size_ * capacity_;
  std::memcpy(slots + rank_ * capacity_, part, static_cast<size_t>(rows * cols) * sizeof(float));
  stamps[rank_].store(stamp, std::memory_order_release);
  // Wait for every rank's part of this call: spin briefly, then yield the core.
  const auto deadline = Clock::now() + timeout_;
  for (int r = 0; r < size_; ++r) {
    for (int spins = 0; stamps[r].load(std::memory_order_acquire) != stamp; ++spins) {
      if (spins < 2000) continue;
      if ((spins & 1023) == 0 && Clock::now() >= deadline) {
        stale_ = rank_ != 0;  // rank 0 may have restarted with a new segment: look again next step
        return Status::Unavailable("tensor-parallel rank " + std::to_string(r) + " did not join step " +
                                   std::to_string(step_) + " within " + std::to_string(timeout_.count()) + " ms");
      }
      sched_yield();
    }
  }
  for (int64_t t = 0; t < rows; ++t)
    for (int r = 0; r < size_; ++r)
      std::memcpy(out + (t * size_ + r) * cols, slots + r * capacity_ + t * cols, static_cast<size_t>(cols) * sizeof(float));
  // A part overwritten while it was read (a rank that gave up on this call and went on) is no gather.
  std::atomic_thread_fence(std::memory_order_acquire);
  for (int r = 0; r < size_; ++r) {
    if (stamps[r].load(std::memory_order_relaxed) == stamp) continue;
    stale_ = rank_ != 0;
    return Status::Unavailable("tensor-parallel rank " + std::to_string(r) + " left step " + std::to_string(step_) +
                               " during the all-gather");
  }
  return Status::Ok();
}

double ShmCollective::TakeSeconds() {
  const double s = seconds_;
  seconds_ = 0;
  return s;
}

}  // namespace radixserve::model
