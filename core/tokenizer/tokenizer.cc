#include "core/tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "core/tokenizer/bpe_tokenizer.h"
#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/spm_tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace radixserve {

using tokenizer::TokenType;

namespace {

// End-of-turn token texts of common chat models (matched exactly, on special tokens only).
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>",     "<|im_end|>", "<|end|>",  "<end_of_turn>",           "<|endoftext|>",
    "<|eom_id|>",     "<EOT>",      "_<EOT>",   "<｜end▁of▁sentence｜>", "<|end_of_text|>",
    "<end_of_utterance>", "<|return|>", "<|call|>",
};

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Special tokens that swallow the whitespace after them. llama.cpp sets this (RSTRIP) for
// models named like Phi-3 only: nothing else in the metadata tells a Phi-3 vocab apart.
Result<std::vector<int32_t>> RstripIds(const gguf::GgufFile& f, const tokenizer::Vocab& vocab) {
  std::vector<int32_t> ids;
  if (!f.Has("general.name")) return ids;
  RS_ASSIGN_OR_RETURN(std::string name, f.GetString("general.name"));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return ids;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const TokenType t = vocab.type(id);
    if (t != TokenType::kControl && t != TokenType::kUserDefined && t != TokenType::kUnknown) continue;
    const std::string& text = vocab.text(id);
    if (text == "<unk>" || text == "<s>" || text == "<|endoftext|>") continue;  // llama.cpp's exceptions
    ids.push_back(id);
  }
  return ids;
}

// Reads an optional token id key; absent keys keep `fallback`, ids outside the vocab
// (such as 0xFFFFFFFF for "none") become -1.
Result<int32_t> ReadTokenId(const gguf::GgufFile& f, std::string_view key, int32_t fallback, int32_t n_vocab) {
  RS_ASSIGN_OR_RETURN(int64_t v, f.GetIntOr(key, fallback));
  return (v >= 0 && v < n_vocab) ? static_cast<int32_t>(v) : -1;
}

}  // namespace

Tokenizer::Tokenizer(tokenizer::Vocab vocab) : vocab_(std::move(vocab)) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const gguf::GgufFile& file) {
  RS_ASSIGN_OR_RETURN(std::string model, file.GetString("tokenizer.ggml.model"));
  if (model != "llama" && model != "gpt2") {
    return Status::Unsupported(file.name() + ": unsupported tokenizer model '" + model +
                               "' (tokenizer.ggml.model); supported: llama, gpt2");
  }
  std::string pre;
  if (file.Has("tokenizer.ggml.pre")) {
    RS_ASSIGN_OR_RETURN(pre, file.GetString("tokenizer.ggml.pre"));
  }
  RS_ASSIGN_OR_RETURN(tokenizer::Vocab vocab, tokenizer::Vocab::Load(file));
  const int32_t n = vocab.size();

  std::unique_ptr<Tokenizer> t;
  bool default_add_bos = false;
  int32_t default_bos = -1, default_eos = -1, default_unk = -1;
  if (model == "llama") {
    t = std::make_unique<tokenizer::SpmTokenizer>(std::move(vocab));
    default_add_bos = true;
    default_bos = 1;
    default_eos = 2;
    default_unk = 0;
    RS_ASSIGN_OR_RETURN(t->add_space_prefix_, file.GetBoolOr("tokenizer.ggml.add_space_prefix", true));
  } else {
    auto kind = tokenizer::PreTokenizerKindFromName(pre);
    if (!kind.ok()) return Status(kind.status().code(), file.name() + ": " + kind.status().message());
    const bool llama3 = (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3" ||
                         pre == "falcon-h1" || pre == "pixtral");
    default_add_bos = llama3;
    RS_ASSIGN_OR_RETURN(std::vector<std::string> merges, file.GetStringArray("tokenizer.ggml.merges"));
    auto bpe = tokenizer::BpeTokenizer::Create(std::move(vocab), merges, *kind, /*ignore_merges=*/llama3);
    if (!bpe.ok()) return Status(bpe.status().code(), file.name() + ": " + bpe.status().message());
    t = std::move(bpe).value();
    RS_ASSIGN_OR_RETURN(t->add_space_prefix_, file.GetBoolOr("tokenizer.ggml.add_space_prefix", false));
    if (t->add_space_prefix_) {
      return Status::Unsupported(file.name() + ": tokenizer.ggml.add_space_prefix is not supported for gpt2");
    }
  }
  t->model_name_ = model;
  t->pre_name_ = pre;
  RS_ASSIGN_OR_RETURN(t->bos_id_, ReadTokenId(file, "tokenizer.ggml.bos_token_id", default_bos, n));
  RS_ASSIGN_OR_RETURN(t->eos_id_, ReadTokenId(file, "tokenizer.ggml.eos_token_id", default_eos, n));
  RS_ASSIGN_OR_RETURN(t->unk_id_, ReadTokenId(file, "tokenizer.ggml.unknown_token_id", default_unk, n));
  RS_ASSIGN_OR_RETURN(t->pad_id_, ReadTokenId(file, "tokenizer.ggml.padding_token_id", -1, n));
  RS_ASSIGN_OR_RETURN(t->add_bos_, file.GetBoolOr("tokenizer.ggml.add_bos_token", default_add_bos));
  RS_ASSIGN_OR_RETURN(t->add_eos_, file.GetBoolOr("tokenizer.ggml.add_eos_token", false));
  if (t->add_bos_ && t->bos_id_ < 0) {
    return Status::Corrupt(file.name() + ": tokenizer.ggml.add_bos_token is true but there is no BOS token");
  }
  if (t->add_eos_ && t->eos_id_ < 0) {
    return Status::Corrupt(file.name() + ": tokenizer.ggml.add_eos_token is true but there is no EOS token");
  }
  RS_ASSIGN_OR_RETURN(std::vector<int32_t> rstrip, RstripIds(file, t->vocab_));
  t->FinishInit(rstrip);
  for (std::string_view key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    RS_ASSIGN_OR_RETURN(int32_t id, ReadTokenId(file, key, -1, n));
    if (id >= 0) t->eog_[id] = true;
  }
  return t;
}

void Tokenizer::FinishInit(std::span<const int32_t> rstrip_ids) {
  const int32_t n = vocab_.size();
  pieces_.resize(n);
  for (int32_t id = 0; id < n; ++id) {
    const TokenType type = vocab_.type(id);
    pieces_[id] = (type == TokenType::kControl || type == TokenType::kUnknown) ? vocab_.text(id) : NormalPiece(id);
  }
  specials_ = std::make_unique<tokenizer::SpecialTokenMatcher>(vocab_, rstrip_ids);
  eog_.assign(n, false);
  if (eos_id_ >= 0) eog_[eos_id_] = true;
  for (int32_t id = 0; id < n; ++id) {
    if (!IsSpecial(id)) continue;
    for (std::string_view text : kEogTexts) {
      if (vocab_.text(id) == text) eog_[id] = true;
    }
  }
}

bool Tokenizer::IsSpecial(int32_t id) const {
  if (!vocab_.Valid(id)) return false;
  const TokenType t = vocab_.type(id);
  return t == TokenType::kControl || t == TokenType::kUserDefined;
}

bool Tokenizer::IsControl(int32_t id) const {
  if (!vocab_.Valid(id)) return false;
  const TokenType t = vocab_.type(id);
  return t == TokenType::kControl || t == TokenType::kUnknown;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_special && add_bos_) out.push_back(bos_id_);
  bool fragment_start = true;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto m = specials_->FindNext(text, pos, parse_special);
    const size_t end = m.length > 0 ? m.begin : text.size();
    if (end > pos) {
      EncodeText(text.substr(pos, end - pos), fragment_start, &out);
      fragment_start = false;
    }
    if (m.length == 0) break;
    out.push_back(m.id);
    fragment_start = true;
    pos = m.begin + m.length;
    if (m.rstrip) {  // llama.cpp's RSTRIP: the text after the token starts past its whitespace
      while (pos < text.size() && IsAsciiSpace(text[pos])) ++pos;
    }
  }
  if (add_special && add_eos_) out.push_back(eos_id_);
  return out;
}

std::string_view Tokenizer::TokenToPiece(int32_t id) const {
  return vocab_.Valid(id) ? std::string_view(pieces_[id]) : std::string_view();
}

std::string_view Tokenizer::TokenText(int32_t id) const {
  return vocab_.Valid(id) ? std::string_view(vocab_.text(id)) : std::string_view();
}

std::string Tokenizer::DecodeImpl(std::span<const int32_t> ids, bool skip_special, bool at_start) const {
  std::string out;
  size_t total = 0;
  for (int32_t id : ids) total += vocab_.Valid(id) ? pieces_[id].size() : 0;
  out.reserve(total);
  for (int32_t id : ids) {
    if (!vocab_.Valid(id)) continue;
    if (skip_special && IsControl(id)) continue;
    out += pieces_[id];
  }
  // Undo the space that Encode prepends to the text, like SentencePiece's decoder.
  if (at_start && add_space_prefix_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  return DecodeImpl(ids, skip_special, /*at_start=*/true);
}

std::string Tokenizer::DecodeWindow(std::span<const int32_t> ids, bool skip_special) const {
  return DecodeImpl(ids, skip_special, /*at_start=*/false);
}

size_t Utf8CompleteLength(std::string_view s) {
  // Look back at most 3 bytes for the lead byte of a sequence that runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<uint8_t>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    if (b < 0x80) return n;
    const size_t len = tokenizer::Utf8SeqLen(b);
    return len > back ? n - back : n;
  }
  return n;
}

}  // namespace radixserve
