// RequestStreams: the requests in flight through the api node, each with the
// sink its outputs go to. It gives each one the id the pipeline knows it by,
// refuses a name already in use or a full queue (max_queued_requests), hands
// each output message's entries to their sinks (with the token pieces of
// logprobs, and the latency metrics), and ends the requests of a group that
// was lost. A request leaves when its last output is delivered.
//
// Thread-safe: mu_ guards pending_, by_name_ and next_rid_; sinks are called
// outside it. HTTP threads open and cancel, the receive thread delivers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/api/backend.h"
#include "core/router/router.h"
#include "core/tokenizer/tokenizer.h"
#include "nodes/api/metrics.h"
#include "transport/messages.h"

namespace radixserve::nodes {

class RequestStreams {
 public:
  explicit RequestStreams(ApiMetrics* metrics) : metrics_(metrics) {}

  // With data parallelism: each request's route is returned to `router` when it ends (null: none).
  // Set while no request is in flight.
  void set_router(router::Router* router) { router_ = router; }

  // Tracks a new request for `group`; its pipeline id, or InvalidArgument (its name is in use) or
  // Unavailable (max_queued requests are in flight).
  Result<uint64_t> Open(const api::GenerateRequest& request, std::shared_ptr<api::ResponseSink> sink, int32_t group,
                        router::Router::Ticket route, int64_t max_queued);
  // A request opened but never sent (the transport refused it): forgotten without an output.
  void Cancel(uint64_t rid);
  // The pipeline id and group of the request named `name`; nullopt when it already ended.
  std::optional<std::pair<uint64_t, int32_t>> Find(const std::string& name) const;
  // Delivers one output message (validated) to the sinks of the requests it carries.
  void Deliver(const transport::BatchStrOutMsg& m, const Tokenizer& tokenizer);
  // Ends the requests in flight in `group` (every group when -1) with a 503 saying `why`.
  void Fail(int32_t group, const std::string& why);
  size_t size() const;

 private:
  struct Pending {
    std::string rid;
    std::shared_ptr<api::ResponseSink> sink;
    std::chrono::steady_clock::time_point start, last_token;
    bool got_first = false;
    bool return_logprob = false;
    api::PriorityClass cls = api::PriorityClass::kDefault;
    int32_t group = 0;              // the data-parallel group serving it
    router::Router::Ticket route;   // its place in the router's load (data parallelism only)
  };
  // A request left pending_ (mu_ held): the in-flight gauge and its group's load follow.
  void CountEnded(const Pending& p);

  ApiMetrics* metrics_;
  router::Router* router_ = nullptr;
  mutable std::mutex mu_;
  uint64_t next_rid_ = 1;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<std::string, uint64_t> by_name_;
};

}  // namespace radixserve::nodes
