// GrammarMatcher: one request's position in a compiled grammar, token by token.
//
// It accepts tokens (refusing any the grammar does not allow, leaving its state unchanged),
// fills the bitmask of tokens allowed next (EOS where the grammar may end), rolls back, forks,
// and gives the forced continuation (the bytes that are the only possible next ones).
//
// A lazy grammar's matcher (grammar.h) starts dormant: the output is free text and it only
// watches for the trigger (DormantPhase). The mask is then the dormant mask (every token with a
// non-empty piece, special ones included, and EOS, except tokens that would complete the trigger
// followed by bytes the grammar refuses); EOS ends the matcher; CanEnd is true, MustEnd false and
// the forced continuation empty. The token (or bytes) that completes the trigger activates it:
// the grammar takes the bytes from the trigger's first byte to the token's end (those before are
// free text), and from then on the matcher is an ordinary one, special tokens refused again
// (but for markup tokens, below).
// Rollback and Fork carry the phase, so a rollback across the activation and a replay of the
// same tokens come back to the same state.
//
// Special tokens: refused once the grammar is active, except the grammar's markup tokens
// (compiled_grammar.h: the special tokens a structural grammar's markup is written with, such
// as "<tool_call>"), which the mask allows and AcceptToken takes exactly where the grammar
// accepts their piece's bytes, as if the piece were spelled in ordinary tokens. A markup EOS
// (an end-of-generation token written within the markup, as gpt-oss's "<|call|>") is also
// allowed where its bytes complete the grammar, and taking it there feeds them and ends.
//
// Thread-compatible: one thread at a time. A matcher and its forks share one StackArena, so a
// matcher and its forks must be used from the same thread. The CompiledGrammar is shared and
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/grammar/compiled_grammar.h"
#include "core/grammar/pda.h"
#include "core/util/status.h"

namespace radixserve::grammar {

class GrammarMatcher {
 public:
  // `max_rollback`: how many accepted tokens Rollback can undo.
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar, int max_rollback = 16);

  // Advances by one token; false (state unchanged) when the grammar does not allow it. EOS is
  // allowed only where the grammar may end (or, for a markup EOS, where its bytes end it), and
  // ends the matcher.
  bool AcceptToken(int32_t id);
  // Advances by raw bytes (tests, forced continuations); false when refused (state unchanged).
  bool AcceptBytes(std::string_view bytes);
  // Sets bit i of `mask` (vocab().mask_words() words) for every token allowed next, clears the
  // rest. After EOS was accepted, no bit is set.
  void FillNextTokenBitmask(uint32_t* mask);
  // Undoes the last `k` accepted tokens (k <= the tokens kept for rollback).
  Status Rollback(int k);
  // An independent copy of the current state (sharing the arena: same thread only).
  GrammarMatcher Fork() const;
  // The bytes that must come next whatever is generated (stops where the grammar may end or
  // branches), at most `max_bytes`.
  std::string ForcedContinuation(size_t max_bytes = 256) const;

  bool CanEnd() const { return !terminated_ && (dormant_ || arena_->accepting(state_)); }
  // The grammar is complete and allows nothing more: only EOS can follow.
  bool MustEnd() const {
    return terminated_ || (!dormant_ && arena_->accepting(state_) && arena_->stacks(state_).empty());
  }
  bool terminated() const { return terminated_; }
  // A lazy grammar's matcher before its trigger.
  bool dormant() const { return dormant_; }
  // Not OK when the state passed its size cap (the request must end with this error).
  const Status& status() const { return arena_->status(); }
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  struct Saved {
    uint32_t state;
    uint32_t trigger_state;
    bool terminated;
    bool dormant;
  };
  struct CachedMask {
    uint32_t state;
    std::vector<uint32_t> words;
  };
  struct ForkTag {};
  GrammarMatcher(const GrammarMatcher& o, ForkTag);
  void Push();
  // Dormant: reads free-text `bytes`, activating the grammar where they complete the trigger;
  // false (state unchanged) when the grammar refuses what follows the trigger.
  bool AcceptDormant(std::string_view bytes);

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::shared_ptr<StackArena> arena_;
  uint32_t state_;
  bool terminated_ = false;
  bool dormant_;               // a lazy grammar before its trigger
  uint32_t trigger_state_ = 0;  // dormant: the trigger automaton's state (DormantPhase)
  int max_rollback_;
  std::vector<Saved> history_;  // states before each accepted token, oldest first
  // Masks of recent states (a JSON string's characters revisit one state).
  std::shared_ptr<std::vector<CachedMask>> mask_cache_;
  std::vector<uint32_t> checked_;  // scratch: token id -> stamp of the last check
  uint32_t stamp_ = 0;
};

}  // namespace radixserve::grammar
