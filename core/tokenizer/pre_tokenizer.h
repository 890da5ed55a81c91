// PreTokenizer: splits text into words before byte-level BPE, as the regexes of each
// model family (tokenizer.ggml.pre) do.
//
// std::regex cannot express \p{L}/\p{N}, so each regex is a hand-written matcher over code
// points that reproduces the regex's leftmost-first alternation and backtracking. A
// family is a sequence of passes; each pass splits every piece from the previous pass
// into matches and the unmatched stretches between them (both kept), like Hugging Face's
// Split(behavior=Isolated) and llama.cpp's unicode_regex_split. Immutable; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/status.h"

namespace radixserve::tokenizer {

enum class PreTokenizerKind {
  kDefault,        // llama.cpp's fallback for BPE vocabs without (or with "default") pre
  kGpt2,           // gpt-2, mpt, phi-2, olmo, ...
  kLlama3,         // llama3 / llama-bpe / dbrx / smaug-bpe
  kQwen2,          // qwen2, stablelm2 (llama3's regex with single digits)
  kGpt4o,          // gpt-4o (o200k_base: Phi-4-mini), llama4
  kDeepseekLlm,    // deepseek-llm
  kDeepseekCoder,  // deepseek-coder
  kFalcon,         // falcon
  kStarcoder,      // starcoder, refact, command-r, smollm, codeshell
};

// Maps a tokenizer.ggml.pre value ("" when absent) to a family, or Unsupported naming it.
Result<PreTokenizerKind> PreTokenizerKindFromName(std::string_view pre);
std::string_view PreTokenizerKindName(PreTokenizerKind kind);

class PreTokenizer {
 public:
  explicit PreTokenizer(PreTokenizerKind kind) : kind_(kind) {}
  PreTokenizerKind kind() const { return kind_; }

  // Byte range [first, second) of one word in the text.
  using Word = std::pair<uint32_t, uint32_t>;
  // Replaces *words with the words of `text`, in order; together they cover all of it.
  void Split(std::string_view text, std::vector<Word>* words) const;

 private:
  PreTokenizerKind kind_;
};

}  // namespace radixserve::tokenizer
