#include "core/tokenizer/special_token_matcher.h"

#include <algorithm>
#include <map>

namespace radixserve::tokenizer {

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab, std::span<const int32_t> rstrip_ids) {
  // Build with maps, then flatten into sorted edge arrays for compact, cache-friendly lookups.
  struct BuildNode {
    std::map<uint8_t, uint32_t> children;
    int32_t id = -1;
    bool user_defined = false;
  };
  std::vector<bool> rstrip(vocab.size(), false);
  for (int32_t id : rstrip_ids) {
    if (vocab.Valid(id)) rstrip[id] = true;
  }
  std::vector<BuildNode> build(1);
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const TokenType t = vocab.type(id);
    if (t != TokenType::kControl && t != TokenType::kUserDefined && t != TokenType::kUnknown) continue;
    const std::string& text = vocab.text(id);
    uint32_t node = 0;
    for (unsigned char c : text) {
      auto it = build[node].children.find(c);
      if (it == build[node].children.end()) {
        build.emplace_back();
        it = build[node].children.emplace(c, static_cast<uint32_t>(build.size() - 1)).first;
      }
      node = it->second;
    }
    build[node].id = id;
    build[node].user_defined = (t == TokenType::kUserDefined);
    first_byte_[static_cast<unsigned char>(text[0])] = true;
  }
  nodes_.resize(build.size());
  for (size_t n = 0; n < build.size(); ++n) {
    nodes_[n].first_edge = static_cast<uint32_t>(edges_.size());
    nodes_[n].num_edges = static_cast<uint32_t>(build[n].children.size());
    nodes_[n].id = build[n].id;
    nodes_[n].user_defined = build[n].user_defined;
    nodes_[n].rstrip = build[n].id >= 0 && rstrip[build[n].id];
    for (const auto& [byte, child] : build[n].children) edges_.push_back({byte, child});
  }
}

int32_t SpecialTokenMatcher::Child(uint32_t node, uint8_t byte) const {
  const Node& n = nodes_[node];
  const Edge* begin = edges_.data() + n.first_edge;
  const Edge* end = begin + n.num_edges;
  const Edge* it = std::lower_bound(begin, end, byte, [](const Edge& e, uint8_t b) { return e.byte < b; });
  return (it != end && it->byte == byte) ? static_cast<int32_t>(it->child) : -1;
}

SpecialTokenMatcher::Match SpecialTokenMatcher::FindNext(std::string_view text, size_t from,
                                                         bool include_control) const {
  Match m;
  if (empty()) return m;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t i = from; i < text.size(); ++i) {
    if (!first_byte_[s[i]]) continue;
    uint32_t node = 0;
    for (size_t j = i; j < text.size(); ++j) {
      const int32_t child = Child(node, s[j]);
      if (child < 0) break;
      node = static_cast<uint32_t>(child);
      const Node& n = nodes_[node];
      if (n.id >= 0 && (include_control || n.user_defined)) {
        m.begin = i;
        m.length = j + 1 - i;
        m.id = n.id;
        m.rstrip = n.rstrip;
      }
    }
    if (m.length > 0) return m;
  }
  return m;
}

}  // namespace radixserve::tokenizer
