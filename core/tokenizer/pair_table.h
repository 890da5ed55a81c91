// PairTable: an open-addressing hash map from a pair of token ids to two int32 values
// (BPE: merge rank and merged id; SPM: merged id). Built once at load, then read-only and
// safe to share between threads. Lookups hash two integers instead of strings, which is
// what keeps the merge loops fast.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace radixserve::tokenizer {

class PairTable {
 public:
  struct Entry {
    uint64_t key = kEmpty;
    int32_t a = 0;
    int32_t b = 0;
  };

  // Sizes the table for about `expected` entries (load factor <= 0.5).
  void Reserve(size_t expected) {
    const size_t capacity = std::bit_ceil(std::max<size_t>(16, expected * 2));
    slots_.assign(capacity, Entry{});
    mask_ = capacity - 1;
    size_ = 0;
  }

  const Entry* Find(int32_t left, int32_t right) const {
    const uint64_t key = Key(left, right);
    for (uint64_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
      const Entry& e = slots_[i];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
    }
  }

  // Inserts unless the pair is present (the first insertion wins). Grows when half full.
  void InsertIfAbsent(int32_t left, int32_t right, int32_t a, int32_t b) {
    if (slots_.empty() || (size_ + 1) * 2 > slots_.size()) Grow();
    const uint64_t key = Key(left, right);
    uint64_t i = Mix(key) & mask_;
    for (; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return;
    }
    slots_[i] = {key, a, b};
    ++size_;
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~0ull;  // no pair of valid (non-negative) ids has this key
  static uint64_t Key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static uint64_t Mix(uint64_t k) {  // splitmix64 finalizer: spreads both ids over all bits
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    return k ^ (k >> 31);
  }
  void Grow() {
    std::vector<Entry> old = std::move(slots_);
    Reserve(std::max<size_t>(16, old.size()));
    for (const Entry& e : old) {
      if (e.key == kEmpty) continue;
      uint64_t i = Mix(e.key) & mask_;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = e;
      ++size_;
    }
  }

  std::vector<Entry> slots_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace radixserve::tokenizer
