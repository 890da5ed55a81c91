#include "core/grammar/dormant_phase.h"

namespace radixserve::grammar {

DormantPhase::DormantPhase(std::string trigger, const Pda* pda, std::shared_ptr<const TokenVocab> vocab)
    : trigger_(std::move(trigger)), pda_(pda), vocab_(std::move(vocab)) {
  const size_t n = trigger_.size();
  // The KMP automaton as a table: row j copies the row of j's longest proper border, then
  // the trigger's next byte goes on to j + 1.
  next_.assign(n * 256, 0);
  next_[static_cast<uint8_t>(trigger_[0])] = 1;
  uint32_t border = 0;
  for (size_t j = 1; j < n; ++j) {
    const uint8_t b = static_cast<uint8_t>(trigger_[j]);
    for (int c = 0; c < 256; ++c) next_[j * 256 + c] = next_[border * 256 + c];
    next_[j * 256 + b] = static_cast<uint16_t>(j + 1);
    border = next_[border * 256 + b];
  }
  masks_ = std::make_unique<std::atomic<const uint32_t*>[]>(n);
  for (size_t j = 0; j < n; ++j) masks_[j].store(nullptr, std::memory_order_relaxed);
  owned_.resize(n);
}

DormantPhase::~DormantPhase() = default;

const uint32_t* DormantPhase::Build(uint32_t state) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (owned_[state]) return owned_[state]->data();
  const TokenVocab& v = *vocab_;
  auto mask = std::make_unique<std::vector<uint32_t>>(v.mask_words(), 0u);
  // The grammar after the trigger, in an arena of this build's own (only tokens that complete
  // the trigger are walked, a handful).
  StackArena arena(pda_);
  const uint32_t after_trigger = arena.AdvanceBytes(arena.Initial(), trigger_);
  for (int32_t id = 0; id < v.size(); ++id) {
    const std::string_view piece = v.piece(id);
    bool takes = v.is_eos(id);
    if (!takes && !piece.empty()) {
      const Scan s = Run(state, piece);
      takes = s.end == std::string_view::npos ||
              arena.AdvanceBytes(after_trigger, piece.substr(s.end)) != StackArena::kDead;
    }
    if (takes) (*mask)[id >> 5] |= 1u << (id & 31);
  }
  owned_[state] = std::move(mask);
  masks_[state].store(owned_[state]->data(), std::memory_order_release);
  return owned_[state]->data();
}

}  // namespace radixserve::grammar
