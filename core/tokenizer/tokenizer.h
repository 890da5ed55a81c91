// Tokenizer: text ↔ token ids for a model, built from the tokenizer.ggml.* metadata of
// its GGUF file. Two models are implemented, as llama.cpp names them:
//   "llama" – SentencePiece-style: score-driven bigram merges over UTF-8 characters,
//             spaces escaped as U+2581 "▁", optional space prefix, byte fallback <0xXX>.
//   "gpt2"  – byte-level BPE: a regex-family pre-tokenizer (tokenizer.ggml.pre), bytes
//             mapped to printable code points, merges applied by rank.
// Anything else (e.g. "bert") is refused with Unsupported.
//
// Special tokens: control, user-defined and unknown tokens are matched in the input before
// tokenization. With parse_special, all of them are emitted as their ids; without it,
// control/unknown texts are tokenized as plain text while user-defined tokens are still
// matched (Hugging Face and llama.cpp do the same: user-defined tokens are "added tokens").
// Phi-3 models (general.name contains "phi-3" or "phi3", the test llama.cpp makes) drop the
// whitespace that follows a matched special token, except after <unk>, <s>, <|endoftext|>.
//
// Round trips: Decode(Encode(x)) == x for any text with three exceptions: a literal "▁" in
// SPM input decodes as a space (SentencePiece cannot tell them apart), in byte-level
// vocabs bytes that never occur in UTF-8 (C0, C1, F5..FF) may have no symbol token (they
// are then dropped, or replaced by the unknown token when there is one) or be user-defined
// tokens that decode as text, and Phi-3's stripped whitespace does not come back. No
// NFC/NFD normalization is applied: no supported vocab needs one (WordPiece "bert" would).
//
// Thread-safety: immutable after FromGguf; Encode/Decode are const, keep no caches, and
// may run concurrently from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/special_token_matcher.h"
#include "core/tokenizer/vocab.h"
#include "core/util/status.h"

namespace radixserve {

class Tokenizer {
 public:
  // Builds the tokenizer that tokenizer.ggml.model names. Errors: NotFound when the model
  // key or token list is missing, Unsupported for another model or an unknown pre-tokenizer,
  // Corrupt/InvalidArgument for inconsistent metadata.
  static Result<std::unique_ptr<Tokenizer>> FromGguf(const gguf::GgufFile& file);

  virtual ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Encodes `text`. add_special: prepend BOS / append EOS as add_bos()/add_eos() say.
  // parse_special: emit special-token texts found in `text` as their ids (see above).
  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;

  // Decodes ids that start a sequence (a prompt, or a whole generation decoded at once):
  // the concatenated raw bytes of each token, where, for vocabs that add a space prefix
  // when encoding, one leading space of the result is removed. skip_special drops control
  // and unknown tokens. Out-of-range ids are skipped. The result may end in an incomplete
  // UTF-8 sequence when byte tokens were cut; see Utf8CompleteLength.
  std::string Decode(std::span<const int32_t> ids, bool skip_special) const;
  // Decodes a window of ids that continues earlier text (incremental detokenization, or a
  // generation that follows its prompt): like Decode, but never removes a leading space.
  // For ids split into a head that holds the first text token and a tail,
  // Decode(head) + DecodeWindow(tail) == Decode(ids).
  std::string DecodeWindow(std::span<const int32_t> ids, bool skip_special) const;

  // Raw bytes of one token as it appears in decoded text ("▁" as space, <0x0A> as "\n",
  // byte-level BPE symbols as their bytes; special tokens as their text). Empty for
  // out-of-range ids. Valid as long as the tokenizer lives.
  std::string_view TokenToPiece(int32_t id) const;
  // The token's text as stored in the vocab ("▁Hello", "Ġworld", "<0x0A>", "<s>").
  std::string_view TokenText(int32_t id) const;

  int32_t vocab_size() const { return vocab_.size(); }
  int32_t bos_id() const { return bos_id_; }  // -1 when the vocab has none
  int32_t eos_id() const { return eos_id_; }
  int32_t unk_id() const { return unk_id_; }
  int32_t pad_id() const { return pad_id_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  std::string_view model_name() const { return model_name_; }  // "llama" or "gpt2"
  std::string_view pre_name() const { return pre_name_; }      // tokenizer.ggml.pre, or ""

  // End of generation: EOS, EOT/EOM ids from metadata, and end-of-turn tokens found by
  // text (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>, ...).
  bool IsEog(int32_t id) const { return vocab_.Valid(id) && eog_[id]; }
  // Control or user-defined token (the token types that Encode can match as whole texts).
  bool IsSpecial(int32_t id) const;
  // Control or unknown token: what skip_special drops when decoding.
  bool IsControl(int32_t id) const;
  tokenizer::TokenType token_type(int32_t id) const { return vocab_.type(id); }
  const tokenizer::Vocab& vocab() const { return vocab_; }

 protected:
  explicit Tokenizer(tokenizer::Vocab vocab);
  // Appends the ids of a stretch of plain text (no special tokens inside). `fragment_start`
  // is true at the start of the input and right after a special token.
  virtual void EncodeText(std::string_view text, bool fragment_start, std::vector<int32_t>* out) const = 0;
  // Decoded bytes of a non-special token (called once per id at load).
  virtual std::string NormalPiece(int32_t id) const = 0;
  // Fills pieces_ and special-token tables; called by FromGguf after the subclass is built.
  // `rstrip_ids`: special tokens that swallow the whitespace after them.
  void FinishInit(std::span<const int32_t> rstrip_ids);

  tokenizer::Vocab vocab_;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t unk_id_ = -1;
  int32_t pad_id_ = -1;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  std::string model_name_;
  std::string pre_name_;
  std::vector<bool> eog_;

 private:
  std::string DecodeImpl(std::span<const int32_t> ids, bool skip_special, bool at_start) const;

  std::vector<std::string> pieces_;  // TokenToPiece per id
  std::unique_ptr<tokenizer::SpecialTokenMatcher> specials_;
};

// Length of the longest prefix of `s` that does not end inside a UTF-8 sequence (a stream
// decoder holds back the rest until more bytes arrive).
size_t Utf8CompleteLength(std::string_view s);

}  // namespace radixserve
