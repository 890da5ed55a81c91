// Vocab: the token table of a tokenizer (texts, scores, types, text → id), read from
// the tokenizer.ggml.* metadata of a GGUF file.
//
// Immutable after Load; safe to read from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/util/status.h"

namespace radixserve::tokenizer {

// tokenizer.ggml.token_type values (llama.cpp's numbering).
enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Transparent string hash so that lookups by string_view need no allocation.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept;
};

class Vocab {
 public:
  // Reads tokens (required), scores and token types (optional; default 0.0 / kNormal).
  // Empty token texts are replaced by "[EMPTY_<id>]" so that they never match text.
  static Result<Vocab> Load(const gguf::GgufFile& file);
  // Builds a vocab directly (tests). `scores` and `types` may be empty.
  static Result<Vocab> FromLists(std::vector<std::string> tokens, std::vector<float> scores,
                                 std::vector<TokenType> types);

  Vocab(Vocab&&) noexcept;
  Vocab& operator=(Vocab&&) noexcept;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;
  ~Vocab();

  int32_t size() const { return static_cast<int32_t>(texts_.size()); }
  bool Valid(int32_t id) const { return id >= 0 && id < size(); }
  const std::string& text(int32_t id) const { return texts_[id]; }
  float score(int32_t id) const { return scores_[id]; }
  TokenType type(int32_t id) const { return types_[id]; }
  // Id of the token whose text is exactly `text`, or -1.
  int32_t Find(std::string_view text) const {
    auto it = index_.find(text);
    return it == index_.end() ? -1 : it->second;
  }

 private:
  Vocab() = default;
  Status BuildIndex();

  std::vector<std::string> texts_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  // Keys view into texts_, which never changes after BuildIndex.
  std::unordered_map<std::string_view, int32_t, StringViewHash, std::equal_to<>> index_;
};

}  // namespace radixserve::tokenizer
