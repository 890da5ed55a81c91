#include "core/api/request_stream.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace radixserve::api {
namespace {

class IndexedSink : public ResponseSink {
 public:
  IndexedSink(std::shared_ptr<RequestStream> stream, int32_t index) : stream_(std::move(stream)), index_(index) {}
  void OnOutput(GenerateOutput output) override { stream_->Push(index_, std::move(output)); }

 private:
  std::shared_ptr<RequestStream> stream_;
  int32_t index_;
};

}  // namespace

RequestStream::RequestStream() : wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

RequestStream::~RequestStream() {
  if (wake_fd_ >= 0) close(wake_fd_);
}

std::shared_ptr<ResponseSink> RequestStream::SinkFor(int32_t index) {
  return std::make_shared<IndexedSink>(shared_from_this(), index);
}

void RequestStream::Push(int32_t index, GenerateOutput output) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_empty = pending_.empty();
    pending_.push_back(Item{index, std::move(output)});
  }
  // Only the first output of a burst needs a wake-up; later ones are drained with it.
  if (was_empty) {
    uint64_t one = 1;
    ssize_t ignored = write(wake_fd_, &one, sizeof(one));
    (void)ignored;
  }
}

void RequestStream::Drain(std::vector<Item>* out) {
  uint64_t count;
  ssize_t ignored = read(wake_fd_, &count, sizeof(count));  // clear first: a later Push re-arms it
  (void)ignored;
  std::lock_guard<std::mutex> lock(mu_);
  for (Item& item : pending_) out->push_back(std::move(item));
  pending_.clear();
}

}  // namespace radixserve::api
