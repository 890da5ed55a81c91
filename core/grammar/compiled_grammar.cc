#include "core/grammar/compiled_grammar.h"

#include <algorithm>

namespace radixserve::grammar {

namespace {

constexpr uint64_t kKeyBits = 21;
constexpr uint64_t kKeyMask = (uint64_t{1} << kKeyBits) - 1;
// The precomputation arena starts afresh past this many nodes (its memo is only a speed-up).
constexpr size_t kArenaResetNodes = 1'000'000;

}  // namespace

std::shared_ptr<const PositionTable> SharedTables::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find(key);
  return it == tables_.end() ? nullptr : it->second;
}

void SharedTables::Insert(const std::string& key, std::shared_ptr<const PositionTable> table) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tables_.emplace(key, std::move(table)).second) return;
  order_.push_back(key);
  while (order_.size() > capacity_) {
    tables_.erase(order_.front());
    order_.pop_front();
  }
}

size_t SharedTables::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tables_.size();
}

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocab> vocab,
                                 std::shared_ptr<SharedTables> shared)
    : grammar_(std::move(grammar)), pda_(grammar_), vocab_(std::move(vocab)), shared_(std::move(shared)) {
  // Rounds upward from 0: every value is at most the true minimum at every round (what
  // SharedKey's cut needs), and reaches it once nothing changes.
  const auto& rules = grammar_.rules();
  min_bytes_.assign(rules.size(), 0);
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      uint64_t best = UINT32_MAX;
      for (const Sequence& seq : rules[r].alternatives) {
        uint64_t n = 0;
        for (const Symbol& sym : seq) n += sym.kind == Symbol::kBytes ? 1 : min_bytes_[sym.index];
        best = std::min(best, n);
      }
      const uint32_t v = static_cast<uint32_t>(std::min<uint64_t>(best, UINT32_MAX));
      if (v != min_bytes_[r]) {
        min_bytes_[r] = v;
        changed = true;
      }
    }
    if (!changed) break;
  }
}

std::string CompiledGrammar::SharedKey(const Context& c) const {
  // A context's walk sees its frames' remaining symbols and the rules they call, but only as far
  // as the longest token reaches: what lies farther (in fewest bytes) than that is spelled as a
  // cut. Rules are numbered in the order met, so equal structures give equal keys.
  constexpr size_t kMaxKeyBytes = 16 << 10;
  constexpr size_t kMaxRules = 128;  // larger structures are rarely met twice
  const uint64_t reach = static_cast<uint64_t>(vocab_->max_depth());
  int depth = 0;
  while (depth < kContextDepth && c.pos[depth] != kNoPosition) ++depth;
  // Pass 1: the fewest bytes before each reachable rule is entered.
  std::unordered_map<uint32_t, uint64_t> dist;
  std::vector<uint32_t> work;
  auto relax_from = [&](uint32_t pos, uint64_t at) {
    for (uint32_t q = pos; pda_.at(q).kind != Pda::kEnd && at <= reach; ++q) {
      const Pda::Position& p = pda_.at(q);
      if (p.kind == Pda::kBytes) {
        at += 1;
        continue;
      }
      auto [it, fresh] = dist.emplace(p.index, at);
      if (fresh || at < it->second) {
        it->second = at;
        work.push_back(p.index);
      }
      at += min_bytes_[p.index];
    }
    return at;
  };
  uint64_t before = 0;
  for (int i = 0; i < depth; ++i) before = relax_from(c.pos[i], before);
  while (!work.empty()) {
    const uint32_t r = work.back();
    work.pop_back();
    if (dist.size() > kMaxRules) return "";
    for (uint32_t alt : pda_.alternatives(r)) relax_from(alt, dist[r]);
  }
  // Pass 2: the spelling.
  std::string key;
  std::unordered_map<uint32_t, uint32_t> canon;
  std::vector<uint32_t> queue;
  auto spell_from = [&](uint32_t pos, uint64_t at) {
    for (uint32_t q = pos;; ++q) {
      const Pda::Position& p = pda_.at(q);
      if (p.kind == Pda::kEnd) break;
      if (at > reach) {  // no token reads this far
        key.push_back('t');
        break;
      }
      if (p.kind == Pda::kBytes) {
        key.push_back('b');
        key.append(reinterpret_cast<const char*>(pda_.bytes(q).bits), sizeof(ByteSet::bits));
        at += 1;
      } else {
        auto [it, fresh] = canon.emplace(p.index, static_cast<uint32_t>(canon.size()));
        if (fresh) queue.push_back(p.index);
        key.push_back('c');
        key.append(reinterpret_cast<const char*>(&it->second), sizeof(uint32_t));
        at += min_bytes_[p.index];
      }
    }
    key.push_back('e');
    return at;
  };
  before = 0;
  for (int i = 0; i < depth; ++i) before = spell_from(c.pos[i], before);
  key.push_back(static_cast<char>('0' + depth));
  for (size_t i = 0; i < queue.size(); ++i) {
    key.push_back('r');
    for (uint32_t alt : pda_.alternatives(queue[i])) spell_from(alt, dist.at(queue[i]));
    if (key.size() > kMaxKeyBytes) return "";
  }
  return key;
}

CompiledGrammar::~CompiledGrammar() = default;

const PositionTable& CompiledGrammar::Table(const StackArena& arena, uint32_t node) const {
  Context c;
  uint64_t key = 0;
  uint32_t n = node;
  for (int i = 0; i < kContextDepth; ++i) {
    if (n == StackArena::kBottom) {
      c.pos[i] = kNoPosition;
    } else {
      c.pos[i] = arena.position(n);
      n = arena.parent(n);
    }
    key |= (c.pos[i] == kNoPosition ? kKeyMask : uint64_t{c.pos[i]}) << (kKeyBits * i);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find(key);
  if (it != tables_.end()) return *it->second;
  const std::string shared_key = shared_ ? SharedKey(c) : std::string();
  std::shared_ptr<const PositionTable> table = shared_key.empty() ? nullptr : shared_->Find(shared_key);
  if (!table) {
    auto built = std::make_shared<const PositionTable>(Build(c));
    table_bytes_.fetch_add(built->allowed_mask.size() * 4 + built->allowed_list.size() * 4 +
                               built->uncertain.size() * 4 + sizeof(PositionTable),
                           std::memory_order_relaxed);
    if (!shared_key.empty()) shared_->Insert(shared_key, built);
    table = std::move(built);
  }
  return *tables_.emplace(key, std::move(table)).first->second;
}

PositionTable CompiledGrammar::Build(const Context& c) const {
  if (!arena_ || arena_->node_count() > kArenaResetNodes || !arena_->status().ok())
    arena_ = std::make_unique<StackArena>(&pda_);
  StackArena& a = *arena_;
  // The context's frames over a marker bottom (or the real bottom when the stack is that short).
  int depth = 0;
  while (depth < kContextDepth && c.pos[depth] != kNoPosition) ++depth;
  uint32_t parent = depth == kContextDepth ? StackArena::kEscape : StackArena::kBottom;
  for (int i = depth - 1; i >= 1; --i) parent = a.NodeOf(c.pos[i], parent);
  const uint32_t start = a.Single(c.pos[0], parent);

  const TokenVocab& v = *vocab_;
  const auto nodes = v.nodes();
  const auto toks = v.trie_tokens();
  PositionTable t;
  std::vector<int32_t>& allowed = t.allowed_list;  // ids in trie order; a bitmask at the end if many
  std::vector<uint32_t> state(v.max_depth() + 1);
  // escaped_below[d]: some path left the context within the first d bytes, so a token longer
  // than d that the context refuses may still be taken by what lies below.
  std::vector<uint8_t> escaped_below(v.max_depth() + 1, 0);
  state[0] = start;
  auto subtree_tokens_end = [&](size_t i) { return nodes[nodes[i].end - 1].token_end; };
  for (size_t i = 1; i < nodes.size();) {
    const TokenVocab::Node& nd = nodes[i];
    const int d = nd.depth;
    // Bytes no stack can take are dead without an advance (most of a node's children, most often).
    const uint32_t s = a.NextBytesOf(state[d - 1]).Has(nd.byte) ? a.Advance(state[d - 1], nd.byte) : StackArena::kDead;
    if (s == StackArena::kDead) {
      if (escaped_below[d - 1])
        t.uncertain.insert(t.uncertain.end(), toks.begin() + nd.token_begin, toks.begin() + subtree_tokens_end(i));
      i = nd.end;
      continue;
    }
    if (t.allowed_mask.empty()) {
      allowed.insert(allowed.end(), toks.begin() + nd.token_begin, toks.begin() + nd.token_end);
      if (allowed.size() * 32 >= static_cast<size_t>(v.mask_words())) {  // many: a bitmask from here on
        t.allowed_mask.assign(v.mask_words(), 0);
        for (int32_t id : allowed) t.allowed_mask[id >> 5] |= 1u << (id & 31);
        std::vector<int32_t>().swap(allowed);
      }
    } else {
      for (uint32_t k = nd.token_begin; k < nd.token_end; ++k) t.allowed_mask[toks[k] >> 5] |= 1u << (toks[k] & 31);
    }
    state[d] = s;
    escaped_below[d] = escaped_below[d - 1] || a.escaped(s);
    if (a.stacks(s).empty()) {
      // Nothing of the context goes on; longer tokens depend on what lies below.
      if (escaped_below[d])
        t.uncertain.insert(t.uncertain.end(), toks.begin() + nd.token_end, toks.begin() + subtree_tokens_end(i));
      i = nd.end;
      continue;
    }
    ++i;
  }
  if (t.allowed_mask.empty()) std::sort(allowed.begin(), allowed.end());
  return t;
}

}  // namespace radixserve::grammar
