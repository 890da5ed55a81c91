#include "core/grammar/compiled_grammar.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace radixserve::grammar {

namespace {

constexpr uint64_t kKeyBits = 21;
constexpr uint64_t kKeyMask = (uint64_t{1} << kKeyBits) - 1;
// The precomputation arena starts afresh past this many nodes (its memo is only a speed-up).
constexpr size_t kArenaResetNodes = 1'000'000;
// Subtrees smaller than this are walked: asking whether a set takes any text costs more.
constexpr uint32_t kMinSubtreeNodes = 8;

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
  if (grammar_.lazy()) dormant_ = std::make_unique<DormantPhase>(grammar_.trigger(), &pda_, vocab_);
  if (!grammar_.markup_texts().empty()) {
    const TokenVocab& v = *vocab_;
    auto in_markup = [&](int32_t id) {
      const std::string_view piece = v.piece(id);
      if (piece.empty()) return false;
      for (const std::string& text : grammar_.markup_texts())
        if (text.find(piece) != std::string::npos) return true;
      return false;
    };
    for (int32_t id = 0; id < v.size(); ++id)
      if (!v.matchable(id) && !v.is_eos(id) && in_markup(id)) markup_tokens_.push_back(id);
    for (int32_t id : v.eos_ids())
      if (in_markup(id)) markup_eos_.push_back(id);
    std::sort(markup_eos_.begin(), markup_eos_.end());
    if (markup_tokens_.size() > kMaxMarkupTokens) {
      std::stable_sort(markup_tokens_.begin(), markup_tokens_.end(),
                       [&v](int32_t a, int32_t b) { return v.piece(a).size() > v.piece(b).size(); });
      markup_tokens_.resize(kMaxMarkupTokens);
      std::sort(markup_tokens_.begin(), markup_tokens_.end());
    }
  }
  // Fewest bytes per rule, exactly (Knuth's generalisation of Dijkstra to grammars): a rule is
  // settled at the smallest total of an alternative whose rules are all settled; rules that
  // derive no finite string stay UINT32_MAX.
  const auto& rules = grammar_.rules();
  min_bytes_.assign(rules.size(), UINT32_MAX);
  struct Alt {
    uint32_t rule, pending;
    uint64_t bytes;
  };
  std::vector<Alt> alts;
  std::vector<std::vector<uint32_t>> used_in(rules.size());  // rule -> alternatives it occurs in
  using Entry = std::pair<uint64_t, uint32_t>;                  // (bytes, rule)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t r = 0; r < rules.size(); ++r)
    for (const Sequence& seq : rules[r].alternatives) {
      const uint32_t a = static_cast<uint32_t>(alts.size());
      alts.push_back(Alt{static_cast<uint32_t>(r), 0, 0});
      for (const Symbol& sym : seq) {
        if (sym.kind == Symbol::kBytes) {
          ++alts[a].bytes;
        } else {
          ++alts[a].pending;
          used_in[sym.index].push_back(a);
        }
      }
      if (alts[a].pending == 0) ready.emplace(alts[a].bytes, static_cast<uint32_t>(r));
    }
  std::vector<uint8_t> settled(rules.size(), 0);
  while (!ready.empty()) {
    const auto [bytes, r] = ready.top();
    ready.pop();
    if (settled[r]) continue;
    settled[r] = 1;
    min_bytes_[r] = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
    for (uint32_t a : used_in[r]) {
      alts[a].bytes += min_bytes_[r];
      if (--alts[a].pending == 0 && !settled[alts[a].rule]) ready.emplace(alts[a].bytes, alts[a].rule);
    }
  }
}

std::string CompiledGrammar::SharedKey(const Context& c) const {
  // A context's walk sees its frames' remaining symbols and the rules they call, but only as far
  // as the longest token reaches: what lies farther (in fewest bytes) than that is spelled as a
  // cut. Rules are numbered in the order met, so equal structures give equal keys.
  constexpr size_t kMaxKeyBytes = 16 << 10;
  constexpr size_t kMaxRules = 512;  // larger structures are rarely met twice
  const uint64_t reach = static_cast<uint64_t>(vocab_->max_depth());
  const int depth = c.depth;
  // Pass 1: the fewest bytes before each reachable rule is entered (scratch indexed by rule,
  // valid where its stamp is this call's).
  if (key_scratch_.size() != min_bytes_.size()) key_scratch_.assign(min_bytes_.size(), KeyScratch{});
  if (++key_stamp_ == 0) {
    key_scratch_.assign(min_bytes_.size(), KeyScratch{});
    key_stamp_ = 1;
  }
  const uint32_t stamp = key_stamp_;
  size_t reached = 0;
  std::vector<uint32_t>& work = key_work_;
  work.clear();
  auto relax_from = [&](uint32_t pos, uint64_t at) {
    for (uint32_t q = pos; pda_.at(q).kind != Pda::kEnd && at <= reach; ++q) {
      const Pda::Position& p = pda_.at(q);
      if (p.kind == Pda::kBytes) {
        at += 1;
        continue;
      }
      KeyScratch& k = key_scratch_[p.index];
      if (k.dist_stamp != stamp || at < k.dist) {
        if (k.dist_stamp != stamp) ++reached;
        k.dist_stamp = stamp;
        k.dist = at;
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
    if (reached > kMaxRules) return "";
    for (uint32_t alt : pda_.alternatives(r)) relax_from(alt, key_scratch_[r].dist);
  }
  // Pass 2: the spelling.
  std::string key;
  key.reserve(256);
  uint32_t numbered = 0;
  std::vector<uint32_t>& queue = key_work_;
  queue.clear();
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
        KeyScratch& k = key_scratch_[p.index];
        if (k.number_stamp != stamp) {
          k.number_stamp = stamp;
          k.number = numbered++;
          queue.push_back(p.index);
        }
        key.push_back('c');
        key.append(reinterpret_cast<const char*>(&k.number), sizeof(uint32_t));
        at += min_bytes_[p.index];
      }
    }
    key.push_back('e');
    return at;
  };
  before = 0;
  for (int i = 0; i < depth; ++i) before = spell_from(c.pos[i], before);
  key.push_back(static_cast<char>('0' + depth));
  key.push_back(c.exact ? 'x' : 'm');
  for (size_t i = 0; i < queue.size(); ++i) {
    key.push_back('r');
    for (uint32_t alt : pda_.alternatives(queue[i])) spell_from(alt, key_scratch_[queue[i]].dist);
    if (key.size() > kMaxKeyBytes) return "";
  }
  return key;
}

CompiledGrammar::~CompiledGrammar() = default;

namespace {

uint64_t KeyOf(const uint32_t* pos, int depth, bool exact, int max_depth) {
  uint64_t key = exact ? uint64_t{1} << 63 : 0;
  for (int i = 0; i < max_depth; ++i) key |= (i < depth ? uint64_t{pos[i]} : kKeyMask) << (kKeyBits * i);
  return key;
}

}  // namespace

const PositionTable& CompiledGrammar::Table(const StackArena& arena, uint32_t node, const MarkupSplit** markup) const {
  Context c{{}, 0, true};
  for (uint32_t n = node; c.depth < kContextDepth; ++c.depth) {
    if (n == StackArena::kBottom) break;
    c.pos[c.depth] = arena.position(n);
    n = arena.parent(n);
  }
  c.exact = c.depth < kContextDepth;
  std::lock_guard<std::mutex> lock(mu_);
  const PositionTable& table = TableOf(c);
  if (markup != nullptr && has_markup()) {
    const uint64_t key = KeyOf(c.pos, c.depth, c.exact, kContextDepth);
    auto it = markup_splits_.find(key);
    if (it == markup_splits_.end()) it = markup_splits_.emplace(key, SplitMarkup(c)).first;
    *markup = &it->second;  // unordered_map keeps its elements in place
  }
  return table;
}

MarkupSplit CompiledGrammar::SplitMarkup(const Context& c) const {
  const uint32_t start_set = StartOf(c);  // first: it may replace the arena and its rows
  WalkRows& w = *rows_;
  const uint32_t start = w.Local(start_set);
  MarkupSplit m;
  // The walk of a piece: whether it is alive after its last byte, and whether some path left the
  // context on the way.
  auto walk = [&](int32_t id, bool* escaped) {
    uint32_t s = start;
    *escaped = false;
    for (char ch : vocab_->piece(id)) {
      s = w.Step(s, static_cast<uint8_t>(ch));
      if (s == WalkRows::kDead) return false;
      *escaped |= (w.flags(s) & WalkRows::kEscaped) != 0;
    }
    return true;
  };
  // As Derive judges a token: alive after its last byte, allowed; dead where some path had
  // left the context before, uncertain; else refused.
  for (int32_t id : markup_tokens_) {
    bool escaped;
    if (walk(id, &escaped)) {
      m.allowed.push_back(id);
    } else if (escaped) {
      m.uncertain.push_back(id);
    }
  }
  // A markup EOS completes the grammar only by popping every frame: over the real bottom, where
  // its bytes are alive; over the marker, only where they leave the context.
  for (int32_t id : markup_eos_) {
    bool escaped;
    const bool alive = walk(id, &escaped);
    if (c.exact ? alive : escaped) m.eos_to_walk.push_back(id);
  }
  return m;
}

const PositionTable& CompiledGrammar::TableOf(const Context& c) const {
  const uint64_t key = KeyOf(c.pos, c.depth, c.exact, kContextDepth);
  auto it = tables_.find(key);
  if (it != tables_.end()) return *it->second;
  std::shared_ptr<const PositionTable> table;
  // The base: the same frames over the marker, or the top frames alone. A context that reaches
  // deep (the third frame: what follows a string) is derived from its base, and only tables
  // walked in full are worth sharing between grammars.
  Context base = c;
  if (c.exact) {
    base.exact = false;
  } else {
    --base.depth;
  }
  const bool derive = base.depth >= 1 && (c.exact || c.depth == kContextDepth);
  if (derive) {
    table = std::make_shared<const PositionTable>(Derive(c, TableOf(base)));
  } else {
    const std::string shared_key = shared_ ? SharedKey(c) : std::string();
    table = shared_key.empty() ? nullptr : shared_->Find(shared_key);
    if (!table) {
      table = std::make_shared<const PositionTable>(Build(c));
      if (!shared_key.empty()) shared_->Insert(shared_key, table);
    }
  }
  table_bytes_.fetch_add(table->allowed_mask.size() * 4 + table->allowed_list.size() * 4 +
                             table->uncertain.size() * 4 + sizeof(PositionTable),
                         std::memory_order_relaxed);
  return *tables_.emplace(key, std::move(table)).first->second;
}

uint32_t CompiledGrammar::StartOf(const Context& c) const {
  if (!arena_ || arena_->node_count() > kArenaResetNodes || !arena_->status().ok()) {
    arena_ = std::make_unique<StackArena>(&pda_);
    rows_ = std::make_unique<WalkRows>(&pda_, arena_.get());
  } else if (rows_->size() > WalkRows::kMaxSets) {
    rows_->Reset();
  }
  StackArena& a = *arena_;
  uint32_t parent = c.exact ? StackArena::kBottom : StackArena::kEscape;
  for (int i = c.depth - 1; i >= 1; --i) parent = a.NodeOf(c.pos[i], parent);
  return a.Single(c.pos[0], parent);
}

PositionTable CompiledGrammar::Derive(const Context& c, const PositionTable& base) const {
  const uint32_t start_set = StartOf(c);  // first: it may replace the arena and its rows
  WalkRows& w = *rows_;
  const uint32_t start = w.Local(start_set);
  const TokenVocab& v = *vocab_;
  PositionTable t;
  t.allowed_mask = base.allowed_mask;
  std::vector<int32_t> added;
  // The uncertain tokens are in trie order: a token shares the states of its common prefix
  // with the one before.
  std::vector<uint32_t> state(v.max_depth() + 1);
  std::vector<uint8_t> escaped_below(v.max_depth() + 1, 0);
  state[0] = start;
  std::string_view prev;
  size_t prev_alive = 0;  // states [0, prev_alive] of prev are valid
  for (int32_t id : base.uncertain) {
    const std::string_view piece = v.piece(id);
    size_t k = 0;
    const size_t same = std::min(prev_alive, piece.size());
    while (k < same && piece[k] == prev[k]) ++k;
    bool alive = true;
    for (; k < piece.size(); ++k) {
      const uint32_t s = w.Step(state[k], static_cast<uint8_t>(piece[k]));
      if (s == WalkRows::kDead) {
        if (escaped_below[k]) t.uncertain.push_back(id);
        alive = false;
        break;
      }
      state[k + 1] = s;
      escaped_below[k + 1] = escaped_below[k] | (w.flags(s) & WalkRows::kEscaped);
    }
    prev = piece;
    prev_alive = k;
    if (alive) added.push_back(id);
  }
  if (!t.allowed_mask.empty()) {
    for (int32_t id : added) t.allowed_mask[id >> 5] |= 1u << (id & 31);
  } else {
    std::vector<int32_t>& all = t.allowed_list;
    std::sort(added.begin(), added.end());
    all.resize(base.allowed_list.size() + added.size());
    std::merge(base.allowed_list.begin(), base.allowed_list.end(), added.begin(), added.end(), all.begin());
    if (all.size() * 32 >= static_cast<size_t>(v.mask_words())) {
      t.allowed_mask.assign(v.mask_words(), 0);
      for (int32_t id : all) t.allowed_mask[id >> 5] |= 1u << (id & 31);
      std::vector<int32_t>().swap(all);
    }
  }
  return t;
}

PositionTable CompiledGrammar::Build(const Context& c) const {
  const uint32_t start_set = StartOf(c);  // first: it may replace the arena and its rows
  WalkRows& w = *rows_;
  const uint32_t start = w.Local(start_set);
  const TokenVocab& v = *vocab_;
  const auto nodes = v.nodes();
  const auto toks = v.trie_tokens();
  const auto below = v.string_chars_below();
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
    const uint32_t s = w.Step(state[d - 1], nd.byte);
    if (s == WalkRows::kDead) {
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
    const uint8_t flags = w.flags(s);
    // A subtree of text under a string's character loop (or enough of a bounded one) is taken
    // whole: the walk would find every token of it alive.
    const int16_t chars_below = below[i];
    if (chars_below > 0 && nd.end - i >= kMinSubtreeNodes && w.TakesStringChars(s, chars_below)) {
      const uint32_t end = subtree_tokens_end(i);
      if (t.allowed_mask.empty()) {
        allowed.insert(allowed.end(), toks.begin() + nd.token_end, toks.begin() + end);
      } else {
        for (uint32_t k = nd.token_end; k < end; ++k) t.allowed_mask[toks[k] >> 5] |= 1u << (toks[k] & 31);
      }
      i = nd.end;
      continue;
    }
    state[d] = s;
    escaped_below[d] = escaped_below[d - 1] | (flags & WalkRows::kEscaped);
    if (flags & WalkRows::kNoStacks) {
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
