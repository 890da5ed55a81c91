// Fuzz target: arbitrary bytes → Tokenizer::Encode / Decode for both tokenizer models.
// The vocabularies are built in-process (no files): the generator's built-in SentencePiece
// vocab, and a small byte-level BPE vocab (all 256 byte symbols, a few merges, special
// tokens) under each pre-tokenizer family.
// Input: byte 0 picks the tokenizer and flags, the rest is the text; the same bytes are
// also decoded as token ids.
// Properties: no crash; every encoded id is in range; decoding valid ids never fails.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/modelgen/builtin_vocab.h"
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/tokenizer.h"
#include "fuzz/fuzz_check.h"

namespace gguf = radixserve::gguf;
using radixserve::Tokenizer;

namespace {

std::unique_ptr<Tokenizer> Build(const gguf::GgufWriter& w) {
  auto bytes = w.Serialize();
  FUZZ_CHECK(bytes.ok());
  // The tokenizer copies what it needs; the file may go away after FromGguf.
  auto file = gguf::GgufFile::Parse(*bytes, "fuzz-vocab");
  FUZZ_CHECK(file.ok());
  auto tok = Tokenizer::FromGguf(**file);
  if (!tok.ok()) {
    std::fprintf(stderr, "fuzz vocab refused: %s\n", tok.status().ToString().c_str());
    std::abort();
  }
  return std::move(*tok);
}

std::unique_ptr<Tokenizer> BuildSpm() {
  const auto& v = radixserve::modelgen::BuiltinVocab();
  gguf::GgufWriter w;
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", v.tokens);
  w.SetF32Array("tokenizer.ggml.scores", v.scores);
  w.SetI32Array("tokenizer.ggml.token_type", v.types);
  return Build(w);
}

std::string Sym(std::string_view bytes) {
  std::string out;
  radixserve::tokenizer::EncodeByteLevel(bytes, &out);
  return out;
}

std::unique_ptr<Tokenizer> BuildBpe(const char* pre) {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(Sym(std::string(1, static_cast<char>(b))));
    types.push_back(1);
  }
  // Merges build " the", "hello", "in", "ing", "é" (two bytes), "12".
  std::vector<std::pair<std::string, std::string>> merges = {
      {" ", "t"}, {" t", "h"}, {" th", "e"}, {"h", "e"}, {"he", "l"}, {"hel", "l"}, {"hell", "o"},
      {"i", "n"}, {"in", "g"}, {"\xC3", "\xA9"}, {"1", "2"}};
  std::vector<std::string> merge_texts;
  for (const auto& [a, b] : merges) {
    merge_texts.push_back(Sym(a) + " " + Sym(b));
    tokens.push_back(Sym(a + b));
    types.push_back(1);
  }
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    tokens.push_back(special);
    types.push_back(3);
  }
  tokens.push_back("<extra>");  // a user-defined token: matched even without parse_special
  types.push_back(4);
  gguf::GgufWriter w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", pre);
  w.SetStringArray("tokenizer.ggml.tokens", tokens);
  w.SetI32Array("tokenizer.ggml.token_type", types);
  w.SetStringArray("tokenizer.ggml.merges", merge_texts);
  w.SetU32("tokenizer.ggml.bos_token_id", 256 + static_cast<uint32_t>(merges.size()));
  w.SetU32("tokenizer.ggml.eos_token_id", 256 + static_cast<uint32_t>(merges.size()));
  return Build(w);
}

const std::vector<std::unique_ptr<Tokenizer>>& Tokenizers() {
  static const auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<Tokenizer>>;
    v->push_back(BuildSpm());
    for (const char* pre : {"gpt-2", "llama3", "qwen2", "deepseek-llm", "deepseek-coder", "falcon", "starcoder",
                            "default"})
      v->push_back(BuildBpe(pre));
    return v;
  }();
  return *all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& all = Tokenizers();
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const Tokenizer& tok = *all[(selector & 0x0F) % all.size()];
  const bool add_special = selector & 0x10;
  const bool parse_special = selector & 0x20;
  const bool skip_special = selector & 0x40;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<int32_t> ids = tok.Encode(text, add_special, parse_special);
  for (int32_t id : ids) FUZZ_CHECK(id >= 0 && id < tok.vocab_size());
  std::string decoded = tok.Decode(ids, skip_special);
  FUZZ_CHECK(radixserve::Utf8CompleteLength(decoded) <= decoded.size());
  // Split decoding must equal whole decoding (the detokenizer relies on it).
  if (ids.size() > 1 && !skip_special) {
    size_t cut = ids.size() / 2;
    std::span<const int32_t> all_ids(ids);
    bool head_has_text = false;
    for (size_t i = 0; i < cut; ++i) head_has_text |= !tok.IsSpecial(ids[i]) && !tok.IsControl(ids[i]);
    std::string head = tok.Decode(all_ids.subspan(0, cut), false);
    if (head_has_text) FUZZ_CHECK(head + tok.DecodeWindow(all_ids.subspan(cut), false) == tok.Decode(ids, false));
  }

  // The same bytes as ids, including out-of-range and negative ones (skipped, never a crash).
  std::vector<int32_t> raw((size - 1) / 4);
  if (!raw.empty()) std::memcpy(raw.data(), data + 1, raw.size() * 4);
  (void)tok.Decode(raw, skip_special);
  (void)tok.DecodeWindow(raw, skip_special);
  for (int32_t id : raw) {
    (void)tok.TokenToPiece(id);
    (void)tok.TokenText(id);
    (void)tok.IsEog(id);
    (void)tok.IsSpecial(id);
    (void)tok.IsControl(id);
  }
  return 0;
}
