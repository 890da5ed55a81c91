// SpmTokenizer: the "llama" (SentencePiece-style) tokenizer.
//
// Spaces become U+2581 "▁" (with one prepended at the start of each text fragment when
// add_space_prefix), the text is split into UTF-8 characters, and adjacent symbols are
// merged greedily, always the pair whose merged text is the vocab token with the highest
// score (leftmost on ties). Symbols that are not tokens fall back to <0xXX> byte tokens,
// or to the unknown token when the vocab lacks those. Thread-safe (see Tokenizer).
#pragma once

#include <array>

#include "core/tokenizer/tokenizer.h"

namespace radixserve::tokenizer {

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

 protected:
  void EncodeText(std::string_view text, bool fragment_start, std::vector<int32_t>* out) const override;
  std::string NormalPiece(int32_t id) const override;

 private:
  void AppendBytes(std::string_view bytes, std::vector<int32_t>* out) const;
  // Merge targets: tokens that text may turn into (normal and user-defined ones, not
  // control, unknown, unused or byte tokens, which SentencePiece never produces from text).
  bool Mergeable(int32_t id) const { return id >= 0 && mergeable_[id]; }

  std::array<int32_t, 256> byte_ids_;  // <0xXX> token per byte, or the unknown token, or -1
  std::vector<bool> mergeable_;
};

}  // namespace radixserve::tokenizer
