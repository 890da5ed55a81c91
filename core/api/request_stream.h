// RequestStream: the hand-off of one HTTP request's outputs from backend
// threads to the connection thread that writes them.
//
// Backend threads push through per-choice ResponseSinks (non-blocking: one
// short lock); the connection thread sleeps in poll() on wake_fd() together
// with its socket, so it sees outputs and client disconnects at once
// without periodic wake-ups. Push is thread-safe; Drain is for one consumer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/api/backend.h"

namespace radixserve::api {

class RequestStream : public std::enable_shared_from_this<RequestStream> {
 public:
  struct Item {
    int32_t index;  // which choice
    GenerateOutput output;
  };

  // Creates the wake descriptor; valid() is false if the system refused it.
  RequestStream();
  ~RequestStream();
  RequestStream(const RequestStream&) = delete;
  RequestStream& operator=(const RequestStream&) = delete;

  bool valid() const { return wake_fd_ >= 0; }
  // Readable (POLLIN) while pushed outputs wait to be drained.
  int wake_fd() const { return wake_fd_; }

  // A sink that tags outputs with a choice index; it keeps this stream alive.
  std::shared_ptr<ResponseSink> SinkFor(int32_t index);

  void Push(int32_t index, GenerateOutput output);
  // Appends every waiting output to *out in arrival order and clears the wake state.
  void Drain(std::vector<Item>* out);

 private:
  int wake_fd_ = -1;
  std::mutex mu_;
  std::vector<Item> pending_;  // guarded by mu_
};

}  // namespace radixserve::api
