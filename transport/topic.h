// Topic names and remapping. A topic is the iceoryx service description
// ("radixserve", <namespace>, <topic>); a launch file can remap a topic name
// to another before a node opens it. Plain data; thread-compatible.
#pragma once

#include <map>
#include <string>

#include "core/util/status.h"

namespace radixserve::transport {

inline constexpr const char* kServiceName = "radixserve";
// iceoryx 2.0 limits each service-description part to 100 characters.
inline constexpr size_t kMaxTopicPartLength = 100;

struct Topic {
  std::string ns = "default";  // namespace: one pipeline's topics
  std::string name;            // e.g. "requests", "forward_batch"

  std::string ToString() const { return "/" + ns + "/" + name; }
};

// Well-known topic names of the pipeline.
namespace topics {
inline constexpr const char* kRequests = "requests";           // api → scheduler: TokenizedRequest, AbortRequest
inline constexpr const char* kForwardBatch = "forward_batch";  // scheduler → worker
inline constexpr const char* kForwardResult = "forward_result";// worker → scheduler
inline constexpr const char* kTokenIdOut = "token_id_out";     // scheduler → detokenizer
inline constexpr const char* kStrOut = "str_out";              // detokenizer → api
inline constexpr const char* kControl = "control";             // api → scheduler (Protobuf)
inline constexpr const char* kControlReply = "control_reply";  // scheduler → api (Protobuf)
inline constexpr const char* kCacheEvents = "cache_events";    // scheduler → data-parallel router (api)
// Pipeline stage r → stage r + 1: kActivationsPrefix followed by r + 1 ("activations_1", ...).
inline constexpr const char* kActivationsPrefix = "activations_";
inline constexpr const char* kNodeStatus = "node_status";      // every container → whoever watches

// Topics whose publishers drop old chunks rather than wait for a slow reader (periodic status,
// cache events a router may miss and notice). iceoryx connects a waiting reader only to a waiting
// writer, so whoever relays one of these must read it lossy too.
inline bool IsLossy(const std::string& name) { return name == kNodeStatus || name == kCacheEvents; }
}  // namespace topics

// Maps topic names (and "ns/name" pairs) to replacements. Applied once when a channel is opened.
class TopicRemap {
 public:
  // `from` and `to` are "name" or "ns/name".
  Status Add(const std::string& from, const std::string& to);
  Topic Apply(const Topic& t) const;

 private:
  std::map<std::string, std::string> rules_;
};

Status ValidateTopic(const Topic& t);

}  // namespace radixserve::transport
