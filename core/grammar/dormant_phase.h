// DormantPhase: what a lazy grammar's matcher (grammar.h, matcher.h) needs before the trigger has
// appeared: the trigger's automaton, to find it in output that arrives token by token, and the
// token masks of the dormant phase.
//
// The automaton is Knuth-Morris-Pratt's: its state is the length of the longest suffix of the
// output so far that is a proper prefix of the trigger. That is all a later token needs of the
// last (trigger length - 1) output bytes to find a trigger split across tokens, and the bytes
// that follow the trigger's first byte are then the trigger itself and the rest of the token.
//
// The dormant mask of a state allows every token the dormant matcher takes: EOS (a plain answer
// ends), every token with a non-empty piece (matchable or special: the dormant phase is free
// text, as an unconstrained request's), except a token whose bytes complete the trigger followed
// by bytes the grammar refuses (activating on it would break the grammar, so it is refused).
// A state's mask is one pass over the vocabulary, built the first time a matcher needs it and
// kept: a dormant step is then a copy of a kept mask.
//
// Thread-safe: masks are built under a lock and published once; reads take no lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/grammar/pda.h"
#include "core/grammar/token_vocab.h"

namespace radixserve::grammar {

class DormantPhase {
 public:
  // `pda` (of a grammar whose matches start with `trigger`, 1 to 65535 bytes) outlives this.
  DormantPhase(std::string trigger, const Pda* pda, std::shared_ptr<const TokenVocab> vocab);
  ~DormantPhase();

  // Where `bytes` read from automaton state `state` complete the trigger: `end` is one past the
  // trigger's last byte in `bytes` (npos when they do not), `state` the automaton's state after
  // `bytes` (meaningful only when they do not).
  struct Scan {
    size_t end;
    uint32_t state;
  };
  Scan Run(uint32_t state, std::string_view bytes) const {
    for (size_t i = 0; i < bytes.size(); ++i) {
      state = next_[state * 256 + static_cast<uint8_t>(bytes[i])];
      if (state == trigger_.size()) return Scan{i + 1, 0};
    }
    return Scan{std::string_view::npos, state};
  }
  const std::string& trigger() const { return trigger_; }
  // The dormant mask (vocab mask_words() words) in automaton state `state` (< trigger length).
  const uint32_t* Mask(uint32_t state) const {
    const uint32_t* m = masks_[state].load(std::memory_order_acquire);
    return m != nullptr ? m : Build(state);
  }

 private:
  const uint32_t* Build(uint32_t state) const;

  std::string trigger_;
  const Pda* pda_;
  std::shared_ptr<const TokenVocab> vocab_;
  std::vector<uint16_t> next_;  // state * 256 + byte -> state; trigger length: found
  std::unique_ptr<std::atomic<const uint32_t*>[]> masks_;  // per state, null until built
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<std::vector<uint32_t>>> owned_;  // guarded by mu_
};

}  // namespace radixserve::grammar
