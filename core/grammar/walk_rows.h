// WalkRows: the successor function of a StackArena's sets as dense rows, for vocabulary walks.
//
// A trie walk advances a handful of sets (a string's character loop, its UTF-8 middles) once per
// trie node, hundreds of thousands of times per table. Here each set met gets a small local
// number and a row of 256 successors filled on first use (a whole class of bytes the grammar
// never tells apart at once), so a step is one load; the arena's own memo (a hash lookup and a
// closure) is paid once per (set, byte class).
//
// It also answers whether a set takes any text of a JSON string's unescaped characters for so
// many characters (TakesStringChars), so a walk can take a subtree of plain text whole.
//
// Single-threaded; valid for one arena.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/grammar/pda.h"

namespace radixserve::grammar {

class WalkRows {
 public:
  static constexpr uint32_t kDead = 0;  // the local number of StackArena::kDead
  static constexpr uint8_t kEscaped = 1, kNoStacks = 2;
  // Sets past this many get no row (4 MiB at most); the owner Resets between walks when full.
  static constexpr uint32_t kMaxSets = 4096;

  WalkRows(const Pda* pda, StackArena* arena);

  // Forgets the local numbers and rows (what is known of string characters stays).
  void Reset();
  // The local number of an arena set (kDead for the empty set).
  uint32_t Local(uint32_t set) {
    if (set < local_of_.size() && local_of_[set] != kNone) return local_of_[set];
    return AddLocal(set);
  }
  // The local successor of local set `from` after `byte`.
  uint32_t Step(uint32_t from, uint8_t byte) {
    if (from >= kMaxSets) return Local(Advance(set_of_[from], byte));  // past the rows' budget
    const uint32_t next = rows_[size_t{from} * 256 + byte];
    return next != kNone ? next : Fill(from, byte);
  }
  uint8_t flags(uint32_t local) const { return flags_[local]; }
  size_t size() const { return set_of_.size(); }

  // Whether every string of at most `chars` unescaped JSON string characters (string_chars.h)
  // leaves local set `from` alive. What is learnt of a set is kept.
  bool TakesStringChars(uint32_t from, int chars);

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // reach_: how many characters a set is known to survive, with kExact when a character kills it
  // right after (kUnbounded: none ever does).
  static constexpr uint16_t kExact = 0x8000, kUnbounded = 0x7FFF;

  uint32_t AddLocal(uint32_t set);
  uint32_t Advance(uint32_t set, uint8_t byte) {
    return arena_->NextBytesOf(set).Has(byte) ? arena_->Advance(set, byte) : StackArena::kDead;
  }
  uint32_t Fill(uint32_t from, uint8_t byte);
  // The arena sets after one whole string character from arena set `set`; {kDead} when one
  // kills it (or following them would cost too much).
  const std::vector<uint32_t>& CharSuccessors(uint32_t set);

  const Pda* pda_;
  StackArena* arena_;
  std::vector<uint8_t> char_bytes_;  // one byte of each (grammar byte class, string byte kind)
  std::vector<uint32_t> local_of_;   // arena set -> local number, kNone where not met
  std::vector<uint32_t> set_of_;     // local number -> arena set
  std::vector<uint8_t> flags_;       // local number -> kEscaped | kNoStacks
  std::vector<uint32_t> rows_;       // local * 256 + byte -> local successor, kNone until filled
  std::vector<uint16_t> reach_;      // arena set -> characters survived (see kExact)
  std::unordered_map<uint32_t, std::vector<uint32_t>> char_successors_;  // arena set -> CharSuccessors
};

}  // namespace radixserve::grammar
