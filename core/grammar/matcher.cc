#include "core/grammar/matcher.h"

#include <algorithm>
#include <cstring>

namespace radixserve::grammar {

namespace {
constexpr size_t kMaskCacheEntries = 16;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar, int max_rollback)
    : grammar_(std::move(grammar)),
      arena_(std::make_shared<StackArena>(&grammar_->pda())),
      state_(arena_->Initial()),
      dormant_(grammar_->dormant() != nullptr),
      max_rollback_(max_rollback),
      mask_cache_(std::make_shared<std::vector<CachedMask>>()) {}

GrammarMatcher GrammarMatcher::Fork() const {
  GrammarMatcher f(*this, ForkTag{});
  return f;
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& o, ForkTag)
    : grammar_(o.grammar_),
      arena_(o.arena_),
      state_(o.state_),
      terminated_(o.terminated_),
      dormant_(o.dormant_),
      trigger_state_(o.trigger_state_),
      max_rollback_(o.max_rollback_),
      history_(o.history_),
      mask_cache_(o.mask_cache_) {}  // checked_ is scratch: not copied

void GrammarMatcher::Push() {
  history_.push_back(Saved{state_, trigger_state_, terminated_, dormant_});
  if (static_cast<int>(history_.size()) > max_rollback_) history_.erase(history_.begin());
}

bool GrammarMatcher::AcceptToken(int32_t id) {
  if (terminated_) return false;
  const TokenVocab& v = grammar_->vocab();
  if (v.is_eos(id)) {
    if (!dormant_ && !arena_->accepting(state_)) {
      // A markup EOS (gpt-oss's <|call|>) where its bytes complete the grammar: those bytes, then the end.
      if (!grammar_->is_markup_eos(id)) return false;
      const uint32_t next = arena_->AdvanceBytes(state_, v.piece(id));
      if (next == StackArena::kDead || !arena_->accepting(next)) return false;
      Push();
      state_ = next;
      terminated_ = true;
      return true;
    }
    Push();
    terminated_ = true;
    return true;
  }
  if (dormant_) return id >= 0 && id < v.size() && !v.piece(id).empty() && AcceptDormant(v.piece(id));
  if (!v.matchable(id) && !grammar_->is_markup(id)) return false;
  const uint32_t next = arena_->AdvanceBytes(state_, v.piece(id));
  if (next == StackArena::kDead) return false;
  Push();
  state_ = next;
  return true;
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (terminated_) return false;
  if (dormant_) return AcceptDormant(bytes);
  const uint32_t next = arena_->AdvanceBytes(state_, bytes);
  if (next == StackArena::kDead) return false;
  Push();
  state_ = next;
  return true;
}

bool GrammarMatcher::AcceptDormant(std::string_view bytes) {
  const DormantPhase& d = *grammar_->dormant();
  const DormantPhase::Scan scan = d.Run(trigger_state_, bytes);
  if (scan.end == std::string_view::npos) {
    Push();
    trigger_state_ = scan.state;
    return true;
  }
  // The trigger's bytes may lie partly in earlier tokens: the grammar reads it whole.
  uint32_t next = arena_->AdvanceBytes(state_, d.trigger());
  next = arena_->AdvanceBytes(next, bytes.substr(scan.end));
  if (next == StackArena::kDead) return false;
  Push();
  state_ = next;
  dormant_ = false;
  trigger_state_ = 0;
  return true;
}

Status GrammarMatcher::Rollback(int k) {
  if (k < 0 || k > static_cast<int>(history_.size()))
    return Status::OutOfRange("cannot roll back " + std::to_string(k) + " tokens; " +
                              std::to_string(history_.size()) + " are kept");
  if (k == 0) return Status::Ok();
  const Saved s = history_[history_.size() - k];
  history_.resize(history_.size() - k);
  state_ = s.state;
  trigger_state_ = s.trigger_state;
  terminated_ = s.terminated;
  dormant_ = s.dormant;
  return Status::Ok();
}

void GrammarMatcher::FillNextTokenBitmask(uint32_t* mask) {
  const TokenVocab& v = grammar_->vocab();
  const int32_t words = v.mask_words();
  if (terminated_) {
    std::memset(mask, 0, sizeof(uint32_t) * words);
    return;
  }
  if (dormant_) {
    std::memcpy(mask, grammar_->dormant()->Mask(trigger_state_), sizeof(uint32_t) * words);
    return;
  }
  for (const CachedMask& c : *mask_cache_)
    if (c.state == state_) {
      std::memcpy(mask, c.words.data(), sizeof(uint32_t) * words);
      return;
    }
  std::memset(mask, 0, sizeof(uint32_t) * words);
  // The tables of the state's stacks (several stacks often share one context).
  const PositionTable* tables[64];
  size_t ntables = 0;
  std::vector<const PositionTable*> more;
  // Markup tokens (special tokens the grammar's markup is written with; most grammars have
  // none): each context's allowed ones go in now, its uncertain ones are walked below.
  const bool markup = grammar_->has_markup();
  std::vector<const MarkupSplit*> markup_to_walk;
  for (uint32_t node : arena_->stacks(state_)) {
    const MarkupSplit* split = nullptr;
    const PositionTable* t = &grammar_->Table(*arena_, node, markup ? &split : nullptr);
    if (split != nullptr) {
      for (int32_t id : split->allowed) mask[id >> 5] |= 1u << (id & 31);
      if (!split->uncertain.empty() || !split->eos_to_walk.empty()) markup_to_walk.push_back(split);
    }
    bool seen = false;
    for (size_t i = 0; i < ntables && !seen; ++i) seen = tables[i] == t;
    for (size_t i = 0; i < more.size() && !seen; ++i) seen = more[i] == t;
    if (seen) continue;
    if (ntables < 64) {
      tables[ntables++] = t;
    } else {
      more.push_back(t);
    }
  }
  more.insert(more.begin(), tables, tables + ntables);
  for (const PositionTable* t : more) {
    if (!t->allowed_mask.empty()) {
      for (int32_t w = 0; w < words; ++w) mask[w] |= t->allowed_mask[w];
    } else {
      for (int32_t id : t->allowed_list) mask[id >> 5] |= 1u << (id & 31);
    }
  }
  // Uncertain tokens: walk their bytes from the whole state.
  if (checked_.size() != static_cast<size_t>(v.size())) checked_.assign(v.size(), 0);
  if (++stamp_ == 0) {
    std::fill(checked_.begin(), checked_.end(), 0);
    stamp_ = 1;
  }
  for (const PositionTable* t : more)
    for (int32_t id : t->uncertain) {
      if ((mask[id >> 5] >> (id & 31)) & 1) continue;
      if (checked_[id] == stamp_) continue;
      checked_[id] = stamp_;
      if (arena_->AdvanceBytes(state_, v.piece(id)) != StackArena::kDead) mask[id >> 5] |= 1u << (id & 31);
    }
  for (const MarkupSplit* split : markup_to_walk)
    for (int32_t id : split->uncertain) {
      if ((mask[id >> 5] >> (id & 31)) & 1) continue;
      if (checked_[id] == stamp_) continue;
      checked_[id] = stamp_;
      if (arena_->AdvanceBytes(state_, v.piece(id)) != StackArena::kDead) mask[id >> 5] |= 1u << (id & 31);
    }
  if (arena_->accepting(state_)) {
    for (int32_t id : v.eos_ids()) mask[id >> 5] |= 1u << (id & 31);
  } else {
    // Markup EOS tokens (gpt-oss's <|call|>) where their bytes complete the grammar.
    for (const MarkupSplit* split : markup_to_walk)
      for (int32_t id : split->eos_to_walk) {
        if ((mask[id >> 5] >> (id & 31)) & 1) continue;
        if (checked_[id] == stamp_) continue;
        checked_[id] = stamp_;
        const uint32_t next = arena_->AdvanceBytes(state_, v.piece(id));
        if (next != StackArena::kDead && arena_->accepting(next)) mask[id >> 5] |= 1u << (id & 31);
      }
  }
  if (mask_cache_.use_count() > 1) mask_cache_ = std::make_shared<std::vector<CachedMask>>(*mask_cache_);
  if (mask_cache_->size() >= kMaskCacheEntries) mask_cache_->erase(mask_cache_->begin());
  mask_cache_->push_back(CachedMask{state_, std::vector<uint32_t>(mask, mask + words)});
}

std::string GrammarMatcher::ForcedContinuation(size_t max_bytes) const {
  std::string out;
  if (terminated_ || dormant_) return out;
  uint32_t s = state_;
  while (out.size() < max_bytes && !arena_->accepting(s)) {
    const ByteSet next = arena_->NextBytes(s);
    if (next.Count() != 1) break;
    uint8_t b = 0;
    while (!next.Has(b)) ++b;
    out.push_back(static_cast<char>(b));
    s = arena_->Advance(s, b);
  }
  return out;
}

}  // namespace radixserve::grammar
