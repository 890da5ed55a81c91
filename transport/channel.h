// Publisher and Subscriber: zero-copy channels over iceoryx shared memory.
//
// A Publisher loans a chunk, the caller writes a message into it in place
// and publishes it; a Subscriber takes chunks and releases them when the
// Received handle goes away. Loan sizes are checked against the largest
// chunk the RouDi pools offer (iceoryx aborts the process on an oversize
// loan), so an impossible message is an error value, not a crash.
// One Publisher/Subscriber per thread (iceoryx ports are not thread-safe);
// InitRuntime must be called once per process first.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "transport/topic.h"

namespace radixserve::transport {

// Registers this process with RouDi under `name` (unique per process). Waits up to
// `timeout` for RouDi; Unavailable when none answers.
Status InitRuntime(const std::string& name, std::chrono::milliseconds timeout = std::chrono::seconds(10));
bool RuntimeInitialized();

struct ChannelOptions {
  // The largest payload one chunk can hold (the largest RouDi mempool size).
  uint32_t max_payload = 4u << 20;
  // Subscriber queue depth (iceoryx caps it at 256) and publisher history.
  uint32_t queue_capacity = 256;
  // Block the publisher instead of dropping when a subscriber's queue is full.
  bool block_when_full = true;
};

class Publisher {
 public:
  static Result<std::unique_ptr<Publisher>> Create(const Topic& topic, const ChannelOptions& options);
  ~Publisher();

  // Loans `size` bytes; OutOfRange when larger than max_payload, ResourceExhausted when pools are empty.
  Result<void*> Loan(size_t size);
  // Publishes a loaned chunk (ownership moves to the subscribers).
  void Publish(void* chunk);
  // Returns an unpublished loan.
  void Release(void* chunk);
  // Copies bytes into a fresh chunk and publishes it (for small and control messages).
  Status PublishCopy(std::span<const uint8_t> bytes);

  bool HasSubscribers() const;
  const Topic& topic() const { return topic_; }
  uint32_t max_payload() const { return options_.max_payload; }

 private:
  struct Impl;
  Publisher(Topic t, ChannelOptions o, std::unique_ptr<Impl> impl);
  Topic topic_;
  ChannelOptions options_;
  std::unique_ptr<Impl> impl_;
};

class Subscriber;

// A received chunk; released back to the pool when destroyed. Move-only.
class Received {
 public:
  Received() = default;
  Received(Received&& o) noexcept { *this = std::move(o); }
  Received& operator=(Received&& o) noexcept;
  ~Received();
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  friend class Subscriber;
  Received(Subscriber* owner, const void* data, size_t size) : owner_(owner), data_(data), size_(size) {}
  Subscriber* owner_ = nullptr;
  const void* data_ = nullptr;
  size_t size_ = 0;
};

class Subscriber {
 public:
  static Result<std::unique_ptr<Subscriber>> Create(const Topic& topic, const ChannelOptions& options);
  ~Subscriber();

  // Takes the next chunk if any (empty Received otherwise). Never blocks.
  Received TryTake();
  bool HasData() const;
  const Topic& topic() const { return topic_; }

 private:
  friend class Received;
  friend class Waiter;
  struct Impl;
  Subscriber(Topic t, std::unique_ptr<Impl> impl);
  void ReleaseChunk(const void* data);
  Topic topic_;
  std::unique_ptr<Impl> impl_;
};

// Blocks until one of several subscribers has data, a Wake() call arrives, or a timeout passes.
// Wait() on one thread; Wake() from any thread.
class Waiter {
 public:
  static Result<std::unique_ptr<Waiter>> Create();
  ~Waiter();
  Status Attach(Subscriber& s);
  // Returns true when woken by data or Wake(), false on timeout.
  bool Wait(std::chrono::microseconds timeout);
  void Wake();

 private:
  struct Impl;
  explicit Waiter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixserve::transport
