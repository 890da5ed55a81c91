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
// Thread-safe: tables are built under a lock and published once; reads take no lock.
#pragma once

#include <atomic>
#include <deque>
#include <string>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/grammar/grammar.h"
#include "core/grammar/pda.h"
#include "core/grammar/token_vocab.h"

namespace radixserve::grammar {

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
  static constexpr int kContextDepth = 3;
  // The token table of the context of stack node `node` of `arena` (built on first use).
  const PositionTable& Table(const StackArena& arena, uint32_t node) const;
  // Bytes of memory held by tables built so far (for the cache's accounting and the benchmark).
  size_t table_bytes() const { return table_bytes_.load(std::memory_order_relaxed); }

 private:
  // The context's positions, top first; kNoPosition past a stack shorter than kContextDepth.
  struct Context {
    uint32_t pos[kContextDepth];
  };
  static constexpr uint32_t kNoPosition = 0xFFFFFFFFu;
  PositionTable Build(const Context& c) const;  // under mu_
  // The context's structure as a key for SharedTables; "" when it reaches too much to share.
  std::string SharedKey(const Context& c) const;

  Grammar grammar_;
  Pda pda_;
  std::shared_ptr<const TokenVocab> vocab_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<StackArena> arena_;  // guarded by mu_; reused across positions
  std::shared_ptr<SharedTables> shared_;
  // Fewest bytes each rule can match (a lower bound: computed upward from 0 for a bounded number
  // of rounds). A context's walk reads at most the longest token, so structure that only lies
  // farther than that is left out of its SharedKey: a string's 40th and 400th character under a
  // maxLength share one table.
  std::vector<uint32_t> min_bytes_;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const PositionTable>> tables_;  // guarded by mu_
  mutable std::atomic<size_t> table_bytes_{0};
};

}  // namespace radixserve::grammar
