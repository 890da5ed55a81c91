// InBatchPrefixDedup: SCHEDULER_SPEC 2.2. Among waiting requests that share
// a prefix not yet in the real cache, only the first (in queue order) keeps
// its priority; the others are marked deprioritized for this pass. Requests
// of different cache salts never share. Uses a
// temporary radix trie whose keys are views into the requests' own token
// arrays (no copies); it is rebuilt on every call, its storage reused.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/scheduler/plugin_abi.h"
#include "core/scheduler/request_view.h"

namespace radixserve::sched {

// A key-only radix trie over views of caller-owned token arrays (valid until Reset).
class TokenViewTrie {
 public:
  void Reset();
  int32_t Match(std::span<const int32_t> key) const;
  void Insert(std::span<const int32_t> key);

 private:
  struct Node {
    const int32_t* key = nullptr;
    int32_t len = 0;
    int32_t first_child = -1;
    int32_t next_sibling = -1;
  };
  int32_t FindChild(int32_t node, int32_t token) const;
  int32_t AddChild(int32_t parent, const int32_t* key, int32_t len);
  std::vector<Node> nodes_{Node{}};
};

// The two parameters of every policy plugin that dedups (SGLang's defaults), for its table.
inline constexpr RsParamSpec kInBatchCheckThresholdParam = {
    "in_batch_check_threshold", RS_PARAM_INT, "32", -1, 1e9, "dedup only requests whose cached match <= this; -1 off"};
inline constexpr RsParamSpec kInBatchDeprioritizeThresholdParam = {
    "in_batch_deprioritize_threshold", RS_PARAM_INT, "32", 0, 1e9, "deprioritize when an earlier request shares >= this"};

class InBatchPrefixDedup {
 public:
  // check_threshold < 0 disables the feature.
  InBatchPrefixDedup(int32_t check_threshold, int32_t deprioritize_threshold)
      : check_threshold_(check_threshold), deprioritize_threshold_(deprioritize_threshold) {}
  // match_lens[i]: request i's match against the real cache. Sets (*deprioritized)[i].
  void Compute(std::span<const RequestView> queue, std::span<const int32_t> match_lens,
               std::vector<uint8_t>* deprioritized);

 private:
  int32_t check_threshold_;
  int32_t deprioritize_threshold_;
  TokenViewTrie trie_;
  std::vector<uint8_t> done_;  // salted requests already compared
};

}  // namespace radixserve::sched
