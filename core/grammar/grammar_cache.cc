#include "core/grammar/grammar_cache.h"

#include "core/grammar/compile.h"

namespace radixserve::grammar {

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocab> vocab, size_t capacity, GrammarLimits limits)
    : vocab_(std::move(vocab)), capacity_(capacity == 0 ? 1 : capacity), limits_(limits) {}

std::string GrammarCache::KeyOf(const GrammarSpec& spec) {
  std::string key(1, static_cast<char>(spec.kind));
  key += spec.text;
  return key;
}

Result<std::shared_ptr<const CompiledGrammar>> GrammarCache::Get(const GrammarSpec& spec) {
  const std::string key = KeyOf(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return it->second->second;
    }
    ++misses_;
  }
  Result<Grammar> g = CompileSpec(spec, limits_);
  if (!g.ok()) return g.status();
  auto compiled = std::make_shared<const CompiledGrammar>(std::move(g).value(), vocab_, shared_tables_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;
  lru_.emplace_front(key, compiled);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return std::shared_ptr<const CompiledGrammar>(compiled);
}

size_t GrammarCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}
uint64_t GrammarCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
uint64_t GrammarCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace radixserve::grammar
