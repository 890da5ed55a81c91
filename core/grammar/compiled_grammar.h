// CompiledGrammar: a grammar bound to a vocabulary, with the per-position token tables that
// make a mask cheap.
//
// For a stack, most tokens are decided by its top few frames alone: a token those frames consume
// entirely (possibly pushing deeper frames) is allowed whatever lies below, and a token that
// dies inside them is refused whatever lies below. Only tokens that pop past them part-way
// through their bytes depend on the rest of the stack ("uncertain"). The table of a context (the
// positions of the top kContextDepth frames; fewer when the stack is that short, and then exact)
// is one trie walk over a marker bottom, made the first time a matcher meets the context and kept
// for every later request of this grammar; a mask is then the union of the tables of the state's
// stacks plus a byte walk of their uncertain tokens only (what XGrammar calls context-independent
// tokens). Three frames cover a JSON string's character, its loop and the string itself, so only
// tokens that close the string are uncertain there.
//
// Only tables of one or two frames over the marker are walked over the whole trie (and shared
// between grammars); a three-frame table, or one over the real bottom, is derived from the table
// of fewer frames by walking that table's uncertain tokens alone (a string's closing tokens, not
// the vocabulary). A walk takes a subtree of plain text whole where the stack is in a string's
// character loop (WalkRows::TakesStringChars), and steps through dense rows (WalkRows).
//
// A lazy grammar (grammar.h) also gets its DormantPhase: the trigger's automaton and the masks
// of the free text before it.
//
// Markup tokens: a grammar with markup texts (grammar.h; structural grammars) also gets the
// vocabulary's special tokens that its markup is written with: every token that is not
// matchable and not EOS and whose non-empty piece occurs within one of the markup texts
// (Qwen's "<tool_call>", Mistral's "[TOOL_CALLS]", gpt-oss's "<|call|>"), at most
// kMaxMarkupTokens of them (the longest pieces first, then the lowest ids). The matcher allows
// such a token wherever the grammar accepts its piece's bytes, and accepts it by those bytes;
// every other special token stays refused. Position tables (shared between grammars) never
// hold them: each context of this grammar gets its MarkupSplit instead, the markup tokens split
// as a table's tokens are (allowed whatever lies below, or uncertain: walked by the matcher
// from the whole state), made by walking the few pieces when the context is first met.
// An end-of-generation token whose piece lies within the markup (gpt-oss's "<|call|>", which
// ends a call and the turn) is a markup EOS: besides where the grammar may end, it is allowed
// where its piece's bytes complete the grammar, and taking it there feeds those bytes and ends.
//
// Thread-safe: tables are built under a lock and published once; reads take no lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <deque>
#include <string>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/grammar/dormant_phase.h"
#include "core/grammar/grammar.h"
#include "core/grammar/pda.h"
#include "core/grammar/token_vocab.h"
#include "core/grammar/walk_rows.h"

namespace radixserve::grammar {

// A context's markup tokens (CompiledGrammar, above): allowed, or to walk from the whole state
// (the rest are refused); and the markup EOS tokens whose bytes may complete the grammar there
// (the context is the whole stack, or their walk leaves it), to walk from the whole state. Ids in
// ascending order.
struct MarkupSplit {
  std::vector<int32_t> allowed;
  std::vector<int32_t> uncertain;
  std::vector<int32_t> eos_to_walk;
};

struct PositionTable {
  // Allowed tokens: a bitmask when many, else a sorted list (most positions allow few tokens).
  std::vector<uint32_t> allowed_mask;  // empty when allowed_list is used
  std::vector<int32_t> allowed_list;
  std::vector<int32_t> uncertain;  // token ids, in trie order
};

// Token tables shared by every grammar of one vocabulary, keyed by the structure a context can
// see (its frames' remaining symbols and the rules they reach, renumbered canonically): the JSON
// string, number and whitespace rules of two schemas give the same key, so a table is built once
// per vocabulary, not once per schema. Bounded (the oldest table goes first). Thread-safe.
class SharedTables {
 public:
  explicit SharedTables(size_t capacity = 4096) : capacity_(capacity) {}
  std::shared_ptr<const PositionTable> Find(const std::string& key) const;
  void Insert(const std::string& key, std::shared_ptr<const PositionTable> table);
  size_t size() const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const PositionTable>> tables_;  // guarded by mu_
  std::deque<std::string> order_;                                               // guarded by mu_
};

class CompiledGrammar {
 public:
  // `shared` (may be null): tables shared with the vocabulary's other grammars.
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocab> vocab,
                  std::shared_ptr<SharedTables> shared = nullptr);
  ~CompiledGrammar();

  const Grammar& grammar() const { return grammar_; }
  const Pda& pda() const { return pda_; }
  const TokenVocab& vocab() const { return *vocab_; }
  const std::shared_ptr<const TokenVocab>& vocab_ptr() const { return vocab_; }
  // Null unless the grammar is lazy.
  const DormantPhase* dormant() const { return dormant_.get(); }
  // The markup tokens (above), in ascending id order; empty unless the grammar has markup texts.
  static constexpr size_t kMaxMarkupTokens = 64;
  const std::vector<int32_t>& markup_tokens() const { return markup_tokens_; }
  bool is_markup(int32_t id) const {
    return !markup_tokens_.empty() && std::binary_search(markup_tokens_.begin(), markup_tokens_.end(), id);
  }
  bool has_markup() const { return !markup_tokens_.empty() || !markup_eos_.empty(); }
  // The markup EOS tokens (above), in ascending id order.
  const std::vector<int32_t>& markup_eos() const { return markup_eos_; }
  bool is_markup_eos(int32_t id) const {
    return !markup_eos_.empty() && std::binary_search(markup_eos_.begin(), markup_eos_.end(), id);
  }
  static constexpr int kContextDepth = 3;
  // The token table of the context of stack node `node` of `arena` (built on first use). With
  // `markup` (and markup tokens), also the context's MarkupSplit there (built on first use).
  const PositionTable& Table(const StackArena& arena, uint32_t node, const MarkupSplit** markup = nullptr) const;
  // Bytes of memory held by tables built so far (for the cache's accounting and the benchmark).
  size_t table_bytes() const { return table_bytes_.load(std::memory_order_relaxed); }

 private:
  // The top `depth` frames' positions, top first, over the real bottom (`exact`: the stack is
  // that short) or over a marker that stands for whatever lies below.
  struct Context {
    uint32_t pos[kContextDepth];
    int depth;
    bool exact;
  };
  // The table of a context (built on first use; under mu_).
  const PositionTable& TableOf(const Context& c) const;
  // One walk of the whole vocabulary trie from the context.
  PositionTable Build(const Context& c) const;
  // The table of `c` from the table of a context that sees less of the same stack (`base`): its
  // allowed tokens stay allowed, its refused ones stay refused, and only its uncertain tokens are
  // walked again (a string's closing tokens, not the whole vocabulary).
  PositionTable Derive(const Context& c, const PositionTable& base) const;
  // The context's MarkupSplit: each markup token's piece walked from the context.
  MarkupSplit SplitMarkup(const Context& c) const;
  // The context's structure as a key for SharedTables; "" when it reaches too much to share.
  std::string SharedKey(const Context& c) const;
  // The stack of the context's frames in arena_, closed.
  uint32_t StartOf(const Context& c) const;

  Grammar grammar_;
  Pda pda_;
  std::shared_ptr<const TokenVocab> vocab_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<StackArena> arena_;  // guarded by mu_; reused across positions
  mutable std::unique_ptr<WalkRows> rows_;     // guarded by mu_; over arena_
  std::shared_ptr<SharedTables> shared_;
  std::unique_ptr<DormantPhase> dormant_;
  std::vector<int32_t> markup_tokens_;  // sorted
  std::vector<int32_t> markup_eos_;     // sorted
  // Fewest bytes each rule can match (UINT32_MAX: no finite string). A context's walk reads at most the longest token, so structure that only lies
  // farther than that is left out of its SharedKey: a string's 40th and 400th character under a
  // maxLength share one table.
  std::vector<uint32_t> min_bytes_;
  // SharedKey's scratch, per rule (guarded by mu_).
  struct KeyScratch {
    uint64_t dist = 0;
    uint32_t dist_stamp = 0, number_stamp = 0, number = 0;
  };
  mutable std::vector<KeyScratch> key_scratch_;
  mutable std::vector<uint32_t> key_work_;
  mutable uint32_t key_stamp_ = 0;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const PositionTable>> tables_;  // guarded by mu_
  mutable std::unordered_map<uint64_t, MarkupSplit> markup_splits_;  // by tables_' key; guarded by mu_
  mutable std::atomic<size_t> table_bytes_{0};
};

}  // namespace radixserve::grammar
