// TokenVocab: a model's vocabulary as the grammar matcher sees it: each token's bytes, in a
// trie laid out in depth-first order, so a walk can skip a whole subtree (every token that
// extends a dead prefix) by one jump.
//
// Built once per tokenizer and shared (read-only) by every compiled grammar and matcher of that
// vocabulary; immutable after construction, so safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace radixserve::grammar {

class TokenVocab {
 public:
  // `pieces[i]`: the bytes token i stands for in output text (byte-fallback tokens: their byte).
  // Tokens in `special` (control tokens, BOS/EOS, unused) never match a grammar; `eos` ids are
  // allowed exactly where the grammar may end. Empty pieces never match either.
  static std::shared_ptr<const TokenVocab> Create(std::vector<std::string> pieces, std::span<const int32_t> special,
                                                  std::span<const int32_t> eos);

  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  // 32-bit words of a bitmask over the vocabulary (bit i of word i / 32 is token i).
  int32_t mask_words() const { return (size() + 31) / 32; }
  std::string_view piece(int32_t id) const { return pieces_[id]; }
  bool is_eos(int32_t id) const { return id >= 0 && id < size() && eos_flag_[id]; }
  std::span<const int32_t> eos_ids() const { return eos_; }
  // Whether a grammar can ever produce the token (non-special, non-empty, not EOS).
  bool matchable(int32_t id) const { return id >= 0 && id < size() && matchable_[id]; }

  // The trie: node 0 is the root (no byte); every other node has a byte and a depth >= 1.
  // Nodes are in preorder, so node i's subtree is [i, end).
  struct Node {
    uint8_t byte;
    uint16_t depth;
    uint32_t end;          // one past the last node of this subtree
    uint32_t token_begin;  // [token_begin, token_end): indices into trie_tokens() ending here
    uint32_t token_end;
  };
  std::span<const Node> nodes() const { return nodes_; }
  // Token ids in trie preorder (a subtree's tokens are the range [token_begin of its first node,
  // token_end of its last node)).
  std::span<const int32_t> trie_tokens() const { return trie_tokens_; }
  // Index of a token's node in preorder (-1 for tokens not in the trie).
  int32_t node_of(int32_t id) const { return node_of_[id]; }
  int32_t max_depth() const { return max_depth_; }
  // Per node: when every token below it goes on with whole unescaped JSON string characters
  // (string_chars.h), the most such characters any of them adds; -1 otherwise.
  std::span<const int16_t> string_chars_below() const { return string_chars_below_; }

 private:
  TokenVocab() = default;
  std::vector<std::string> pieces_;
  std::vector<uint8_t> eos_flag_;
  std::vector<uint8_t> matchable_;
  std::vector<int32_t> eos_;
  std::vector<Node> nodes_;
  std::vector<int32_t> trie_tokens_;
  std::vector<int32_t> node_of_;
  std::vector<int16_t> string_chars_below_;
  int32_t max_depth_ = 0;
};

}  // namespace radixserve::grammar
