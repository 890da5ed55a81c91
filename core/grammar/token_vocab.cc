#include "core/grammar/token_vocab.h"

#include <algorithm>
#include <numeric>

#include "core/grammar/string_chars.h"

namespace radixserve::grammar {

namespace {

// How many whole unescaped string characters `s` is; -1 when it is not only such characters.
int StringCharsOf(std::string_view s) {
  StringCharState state = StringCharState::kStart;
  int chars = 0;
  for (char c : s) {
    state = StringCharStep(state, static_cast<uint8_t>(c));
    if (state == StringCharState::kReject) return -1;
    chars += state == StringCharState::kDone;
  }
  return state == StringCharState::kDone || state == StringCharState::kStart ? chars : -1;
}

}  // namespace

std::shared_ptr<const TokenVocab> TokenVocab::Create(std::vector<std::string> pieces,
                                                     std::span<const int32_t> special,
                                                     std::span<const int32_t> eos) {
  std::shared_ptr<TokenVocab> v(new TokenVocab());
  const int32_t n = static_cast<int32_t>(pieces.size());
  v->pieces_ = std::move(pieces);
  v->eos_flag_.assign(n, 0);
  v->matchable_.assign(n, 1);
  v->node_of_.assign(n, -1);
  for (int32_t id : eos)
    if (id >= 0 && id < n && !v->eos_flag_[id]) {
      v->eos_flag_[id] = 1;
      v->eos_.push_back(id);
    }
  for (int32_t id : special)
    if (id >= 0 && id < n) v->matchable_[id] = 0;
  for (int32_t id = 0; id < n; ++id)
    if (v->eos_flag_[id] || v->pieces_[id].empty()) v->matchable_[id] = 0;

  // Sorting the matchable tokens by their bytes gives the trie's preorder directly: a node is a
  // distinct prefix, visited in the order its first token appears.
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n; ++id)
    if (v->matchable_[id]) order.push_back(id);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const int c = v->pieces_[a].compare(v->pieces_[b]);
    return c != 0 ? c < 0 : a < b;
  });
  v->nodes_.push_back(Node{0, 0, 0, 0, 0});
  std::vector<uint32_t> path{0};  // node index at each depth along the current branch
  std::string_view prev;
  for (int32_t id : order) {
    std::string_view s = v->pieces_[id];
    size_t common = 0;
    while (common < prev.size() && common < s.size() && prev[common] == s[common]) ++common;
    // Close the nodes deeper than the shared prefix.
    while (path.size() > common + 1) {
      v->nodes_[path.back()].end = static_cast<uint32_t>(v->nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      const uint32_t tb = static_cast<uint32_t>(v->trie_tokens_.size());
      v->nodes_.push_back(Node{static_cast<uint8_t>(s[d]), static_cast<uint16_t>(d + 1), 0, tb, tb});
      path.push_back(static_cast<uint32_t>(v->nodes_.size() - 1));
    }
    Node& at = v->nodes_[path.back()];
    if (at.token_end != v->trie_tokens_.size()) {  // not possible: tokens of a node are adjacent
      at.token_begin = at.token_end = static_cast<uint32_t>(v->trie_tokens_.size());
    }
    // Every node on the token's path learns how its rest of the token reads.
    if (v->string_chars_below_.size() < v->nodes_.size()) v->string_chars_below_.resize(v->nodes_.size(), 0);
    for (size_t d = 0; d < path.size(); ++d) {
      int16_t& below = v->string_chars_below_[path[d]];
      if (below < 0) continue;
      const int chars = StringCharsOf(s.substr(d));
      below = chars < 0 ? int16_t{-1} : static_cast<int16_t>(std::max<int>(below, chars));
    }
    v->trie_tokens_.push_back(id);
    at.token_end = static_cast<uint32_t>(v->trie_tokens_.size());
    v->node_of_[id] = static_cast<int32_t>(path.back());
    v->max_depth_ = std::max<int32_t>(v->max_depth_, static_cast<int32_t>(s.size()));
    prev = s;
  }
  while (!path.empty()) {
    v->nodes_[path.back()].end = static_cast<uint32_t>(v->nodes_.size());
    path.pop_back();
  }
  v->string_chars_below_.resize(v->nodes_.size(), 0);
  return v;
}

}  // namespace radixserve::grammar
