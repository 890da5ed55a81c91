// IncrementalDetokenizer: turns each request's stream of token ids into text
// deltas (SCHEDULER_SPEC 7.5). Every window is decoded together with a few
// preceding "surrounding" tokens, so tokenizers whose pieces depend on
// context (SentencePiece spaces) decode correctly, and a multi-byte UTF-8
// character split across tokens is held back until it is complete.
//
// State per request id lives in an LRU-capped table (65,536 by default):
// a request that never finishes cannot grow memory without bound.
// Not thread-safe: one detokenizer thread owns it.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/tokenizer/tokenizer.h"

namespace radixserve::detok {

struct DetokInput {
  uint64_t rid = 0;
  // New ids since the last call. The first call carries a few prompt tokens (context) first.
  std::span<const int32_t> new_ids;
  // First call only: index in new_ids where this request's output starts.
  int32_t read_offset = 0;
  bool finished = false;
  bool skip_special_tokens = true;
  // Trim the output at the stop string / drop the matched stop token (unless no_stop_trim).
  bool no_stop_trim = false;
  bool matched_stop_token = false;  // finished by a stop token id: its text is not output
  std::string_view matched_stop_str;
};

class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer* tokenizer, size_t max_states = 65536)
      : tokenizer_(tokenizer), max_states_(max_states) {}

  // Appends the ids and returns the new text to send (possibly empty). On `finished`, returns the
  // rest and forgets the request.
  std::string Step(const DetokInput& in);
  // Forgets a request (e.g. aborted before it finished).
  void Forget(uint64_t rid);
  size_t num_states() const { return states_.size(); }

 private:
  struct State {
    std::vector<int32_t> ids;
    size_t surr = 0;         // start of the context window
    size_t read = 0;         // ids before this are committed to `text`
    std::string text;        // committed text
    size_t sent = 0;         // bytes of output already returned
    std::list<uint64_t>::iterator lru;
  };
  State& Lookup(uint64_t rid, bool* created);

  const Tokenizer* tokenizer_;
  size_t max_states_;
  std::unordered_map<uint64_t, State> states_;
  std::list<uint64_t> lru_;  // most recent at the front
};

}  // namespace radixserve::detok
