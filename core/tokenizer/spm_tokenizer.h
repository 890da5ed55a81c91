// SpmTokenizer: the "llama" (SentencePiece-style) tokenizer.
//
// Spaces become U+2581 "▁" (with one prepended at the start of each text fragment when
// add_space_prefix), the text is split into UTF-8 characters, and adjacent symbols are
// merged greedily, always the pair whose merged text is the vocab token with the highest
// score (leftmost on ties). Symbols that are not tokens fall back to <0xXX> byte tokens,
// or to the unknown token when the vocab lacks those. Thread-safe (see Tokenizer).
//
// Speed: merges are looked up by the pair of symbol ids (a table of every way to split
// each token into two tokens, built at load), and when no mergeable token has "▁" after
// another character (true of llama vocabs) the text is cut before each word's "▁" and
// every word is merged on its own: no merge can cross such a cut, so the result is the
// same as merging the whole text, with small heaps.
#pragma once

#include <array>

#include "core/tokenizer/pair_table.h"

#include "core/tokenizer/tokenizer.h"

namespace radixserve::tokenizer {

struct SpmScratch;

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

 protected:
  void EncodeText(std::string_view text, bool fragment_start, std::vector<int32_t>* out) const override;
  std::string NormalPiece(int32_t id) const override;

 private:
  void AppendBytes(std::string_view bytes, std::vector<int32_t>* out) const;
  // Merges one independent stretch of escaped text and appends its ids.
  void EncodeSegment(std::string_view seg, SpmScratch* scratch, std::vector<int32_t>* out) const;
  // Id of the merged symbol left+right, or -1 when their concatenation is not mergeable.
  int32_t MergedId(int32_t left_id, int32_t right_id, std::string_view concatenated) const;
  // Merge targets: tokens that text may turn into (normal, user-defined and undefined
  // ones; not control, unknown, unused or byte tokens, which SentencePiece never produces
  // from text).
  bool Mergeable(int32_t id) const { return id >= 0 && mergeable_[id]; }

  std::array<int32_t, 256> byte_ids_;  // <0xXX> token per byte, or the unknown token, or -1
  std::vector<bool> mergeable_;
  PairTable pairs_;              // (left id, right id) -> merged id, for mergeable tokens
  bool split_at_words_ = false;  // no mergeable token has "▁" after another character
  std::array<int32_t, 128> ascii_ids_;  // mergeable id of each ASCII character, or -1
};

}  // namespace radixserve::tokenizer
