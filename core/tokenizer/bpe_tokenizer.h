// BpeTokenizer: the "gpt2" (byte-level BPE) tokenizer.
//
// Text is split into words by the pre-tokenizer of tokenizer.ggml.pre; each word's bytes
// start as single byte-level symbols, and adjacent pairs are merged by merge rank (lowest
// first, leftmost on ties) using a table keyed by the pair of symbol ids built at load.
// Symbols that end up outside the vocab are emitted byte by byte. Thread-safe (see
// Tokenizer).
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizer/pair_table.h"
#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::tokenizer {

struct BpeScratch;

class BpeTokenizer final : public Tokenizer {
 public:
  // `merges` are "left right" strings in rank order (tokenizer.ggml.merges). With
  // `ignore_merges`, a word that is itself a vocab token is emitted whole (llama3).
  static Result<std::unique_ptr<BpeTokenizer>> Create(Vocab vocab, const std::vector<std::string>& merges,
                                                      PreTokenizerKind pre, bool ignore_merges);

 protected:
  void EncodeText(std::string_view text, bool fragment_start, std::vector<int32_t>* out) const override;
  std::string NormalPiece(int32_t id) const override;

 private:
  BpeTokenizer(Vocab vocab, PreTokenizerKind pre, bool ignore_merges);
  // Id of a merge operand or result: its vocab id, or a synthetic id >= vocab size for a
  // string that only exists inside the merge list (inconsistent vocabs).
  int32_t PieceId(const std::string& text);
  void EncodeWord(std::string_view word, std::vector<int32_t>* out, BpeScratch* scratch) const;
  void AppendBytes(std::string_view bytes, std::vector<int32_t>* out) const;

  PreTokenizer pre_;
  bool ignore_merges_;
  std::array<int32_t, 256> byte_ids_;  // vocab id of each byte's symbol, or -1
  PairTable merges_;                   // (left id, right id) -> (rank, merged id)
  std::unordered_map<std::string, int32_t> extra_pieces_;  // load time only
};

}  // namespace radixserve::tokenizer
