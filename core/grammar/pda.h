// Pda and StackArena: the grammar as a pushdown automaton over bytes.
//
// Pda lays a Grammar's alternatives out as one array of positions (a byte set, a rule call, or
// the end of an alternative). A parse state is a set of stacks; a stack is a chain of
// hash-consed nodes (position, parent), so equal stacks are one id, sets of stacks dedupe by id,
// and a set is itself interned. StackArena owns those tables and memoises the two operations the
// matcher repeats millions of times: the closure of a stack (expanding rule calls and popping
// finished frames until every stack waits on a byte) and the advance of a set by one byte.
// Calls in tail position reuse their caller's frame, so right recursion (a JSON string's
// characters, a repetition) keeps stacks flat and revisits the same set.
//
// Pda is immutable and shareable. StackArena is single-threaded (one per matcher, one per
// compiled grammar's precomputation under its lock).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar {

class Pda {
 public:
  enum Kind : uint8_t { kBytes, kCall, kEnd };
  struct Position {
    Kind kind;
    uint32_t index;  // kBytes: byte-set index; kCall: rule
  };
  explicit Pda(const Grammar& g);

  const Position& at(uint32_t pos) const { return positions_[pos]; }
  const ByteSet& bytes(uint32_t pos) const { return sets_[positions_[pos].index]; }
  std::span<const uint32_t> alternatives(uint32_t rule) const { return alt_starts_[rule]; }
  uint32_t root() const { return root_; }
  size_t position_count() const { return positions_.size(); }
  // Bytes no byte set of the grammar tells apart form a class: every set advances on them alike.
  uint8_t byte_class(uint8_t byte) const { return byte_class_[byte]; }
  std::span<const uint8_t> class_bytes(uint8_t cls) const {
    return {class_bytes_.data() + class_begin_[cls], static_cast<size_t>(class_begin_[cls + 1] - class_begin_[cls])};
  }

 private:
  uint8_t byte_class_[256];
  std::vector<uint8_t> class_bytes_;    // bytes grouped by class
  std::vector<uint16_t> class_begin_;   // class -> first index in class_bytes_; one past the end last
  std::vector<Position> positions_;
  std::vector<ByteSet> sets_;
  std::vector<std::vector<uint32_t>> alt_starts_;
  uint32_t root_ = 0;
};

// Open-addressing map from 64-bit keys to 32-bit values (no deletion), for the memo tables.
class FlatMap64 {
 public:
  static constexpr uint32_t kMissing = 0xFFFFFFFFu;
  FlatMap64() { Rehash(64); }
  uint32_t Find(uint64_t key) const {
    for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].value == kMissing) return kMissing;
      if (slots_[i].key == key) return slots_[i].value;
    }
  }
  void Insert(uint64_t key, uint32_t value);
  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t key;
    uint32_t value;
  };
  static size_t Hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  void Rehash(size_t capacity);
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

class StackArena {
 public:
  static constexpr uint32_t kBottom = 0xFFFFFFFFu;  // below the root frame: popping it ends the grammar
  static constexpr uint32_t kEscape = 0xFFFFFFFEu;  // below a lone frame (precomputation): popping it escapes
  static constexpr uint32_t kDead = 0;              // the empty set: no stack, no flag
  static constexpr size_t kDefaultMaxNodes = 4'000'000;

  explicit StackArena(const Pda* pda, size_t max_nodes = kDefaultMaxNodes);

  // The set of the root frame's alternatives, closed.
  uint32_t Initial();
  // The hash-consed node `pos` over `parent`.
  uint32_t NodeOf(uint32_t pos, uint32_t parent);
  // The closed set of one stack: `pos` over `parent` (kBottom, kEscape or a node).
  uint32_t Single(uint32_t pos, uint32_t parent);
  // The set after `byte`; kDead when no stack takes it. Memoised.
  uint32_t Advance(uint32_t set, uint8_t byte);
  uint32_t AdvanceBytes(uint32_t set, std::string_view bytes) {
    for (char c : bytes) {
      set = Advance(set, static_cast<uint8_t>(c));
      if (set == kDead) break;
    }
    return set;
  }

  // Stacks of a set; each top waits on a byte set.
  std::span<const uint32_t> stacks(uint32_t set) const {
    return {pool_.data() + sets_[set].offset, sets_[set].size};
  }
  bool accepting(uint32_t set) const { return sets_[set].flags & kAccept; }  // the root frame ended
  bool escaped(uint32_t set) const { return sets_[set].flags & kEscaped; }   // a lone frame ended
  bool live(uint32_t set) const { return set != kDead; }
  uint32_t position(uint32_t node) const { return nodes_[node].pos; }
  uint32_t parent(uint32_t node) const { return nodes_[node].parent; }
  // Bytes some stack of the set can take next.
  ByteSet NextBytes(uint32_t set) const;
  // The same, kept per set: a trie walk tests a child's byte against it before advancing.
  const ByteSet& NextBytesOf(uint32_t set) {
    if (set >= next_known_.size()) {
      next_known_.resize(sets_.size(), 0);
      next_bytes_.resize(sets_.size());
    }
    if (!next_known_[set]) {
      next_bytes_[set] = NextBytes(set);
      next_known_[set] = 1;
    }
    return next_bytes_[set];
  }

  // Set once the node cap is passed (a runaway recursion); sets made after it are kDead.
  const Status& status() const { return status_; }
  size_t node_count() const { return nodes_.size(); }

 private:
  static constexpr uint8_t kAccept = 1, kEscaped = 2;
  struct Node {
    uint32_t pos, parent;
  };
  struct Set {
    uint32_t offset, size;
    uint8_t flags;
  };
  // Appends the closure of node to closure_ (tops waiting on bytes) and ORs flags.
  void Close(uint32_t node, uint8_t* flags);
  uint32_t InternSet(std::vector<uint32_t>* tops, uint8_t flags);
  uint32_t ClosureOf(uint32_t node);  // memoised closure of one node, as a set id

  const Pda* pda_;
  size_t max_nodes_;
  Status status_;
  std::vector<Node> nodes_;
  FlatMap64 node_index_;
  std::vector<Set> sets_;
  std::vector<uint32_t> pool_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> set_index_;
  FlatMap64 closure_memo_;  // node -> set
  FlatMap64 advance_memo_;  // set << 8 | byte -> set
  // Dense successor rows of hot sets: dense_index_[set] -> row in dense_rows_ (256 entries).
  static constexpr uint16_t kDenseAfter = 64;        // advances of a set before it gets a row
  static constexpr size_t kMaxDenseRows = 1024;      // at most 1 MiB of rows per arena
  std::vector<uint32_t> dense_index_;
  std::vector<uint32_t> dense_rows_;
  std::vector<uint16_t> hits_;
  std::vector<ByteSet> next_bytes_;  // per set, valid where next_known_
  std::vector<uint8_t> next_known_;
  // Scratch for Close and Advance.
  std::vector<uint32_t> work_, tops_, merged_;
  std::vector<uint32_t> visit_stamp_;
  uint32_t stamp_ = 0;
};

}  // namespace radixserve::grammar
