// SpecialTokenMatcher: finds special-token texts (control, user-defined, unknown tokens)
// inside input text, so that they are emitted as single ids instead of being tokenized.
//
// A byte trie built once; matching is leftmost-longest (at each position the longest
// allowed token text wins), as Hugging Face's added-token matcher does. Immutable after
// construction; safe to use from many threads.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace radixserve::tokenizer {

class SpecialTokenMatcher {
 public:
  // Indexes every kControl, kUserDefined and kUnknown token of `vocab`. The tokens in
  // `rstrip_ids` swallow the whitespace that follows them (llama.cpp's RSTRIP attribute).
  explicit SpecialTokenMatcher(const Vocab& vocab, std::span<const int32_t> rstrip_ids = {});

  struct Match {
    size_t begin = 0;   // byte offset in the text
    size_t length = 0;  // 0 when there is no match
    int32_t id = -1;
    bool rstrip = false;  // the caller drops the whitespace right after the match
  };
  // The first match at or after `from`. With `include_control` false only user-defined
  // tokens match (Hugging Face extracts those even when special tokens are not parsed).
  Match FindNext(std::string_view text, size_t from, bool include_control) const;

  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    uint32_t first_edge = 0;  // children are edges_[first_edge, first_edge + num_edges), sorted by byte
    uint32_t num_edges = 0;
    int32_t id = -1;          // token ending here, or -1
    bool user_defined = false;
    bool rstrip = false;
  };
  struct Edge {
    uint8_t byte;
    uint32_t child;
  };
  int32_t Child(uint32_t node, uint8_t byte) const;

  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  bool first_byte_[256] = {};  // bytes that can start a token text; skips most positions quickly
};

}  // namespace radixserve::tokenizer
