// GrammarCache: compiled grammars of one vocabulary, keyed by their spec, shared by requests.
//
// A bounded LRU: at most `capacity` grammars are kept; a grammar still used by a request
// outlives its eviction (shared ownership). A failed compile is not kept. Thread-safe: lookups
// take a lock; compiling happens outside it (two requests compiling the same new spec at once
// may both compile; the second result is dropped).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/grammar/compiled_grammar.h"
#include "core/grammar/grammar_spec.h"
#include "core/grammar/token_vocab.h"
#include "core/util/status.h"

namespace radixserve::grammar {

class GrammarCache {
 public:
  GrammarCache(std::shared_ptr<const TokenVocab> vocab, size_t capacity = 64, GrammarLimits limits = {});

  // The compiled grammar of `spec` (compiling it on a miss).
  Result<std::shared_ptr<const CompiledGrammar>> Get(const GrammarSpec& spec);

  size_t size() const;
  size_t capacity() const { return capacity_; }
  uint64_t hits() const;
  uint64_t misses() const;
  const std::shared_ptr<const TokenVocab>& vocab() const { return vocab_; }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledGrammar>>;
  static std::string KeyOf(const GrammarSpec& spec);

  std::shared_ptr<const TokenVocab> vocab_;
  std::shared_ptr<SharedTables> shared_tables_ = std::make_shared<SharedTables>();
  size_t capacity_;
  GrammarLimits limits_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // guarded by mu_
  uint64_t hits_ = 0, misses_ = 0;  // guarded by mu_
};

}  // namespace radixserve::grammar
