#include "core/tokenizer/vocab.h"

#include <utility>

namespace radixserve::tokenizer {

size_t StringViewHash::operator()(std::string_view s) const noexcept {
  // FNV-1a, 64-bit: token texts are short, and this is cheaper than std::hash's setup.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

Vocab::Vocab(Vocab&&) noexcept = default;
Vocab& Vocab::operator=(Vocab&&) noexcept = default;
Vocab::~Vocab() = default;

Result<Vocab> Vocab::Load(const gguf::GgufFile& file) {
  RS_ASSIGN_OR_RETURN(std::vector<std::string> tokens, file.GetStringArray("tokenizer.ggml.tokens"));
  std::vector<float> scores;
  if (file.Has("tokenizer.ggml.scores")) {
    RS_ASSIGN_OR_RETURN(scores, file.GetFloatArray("tokenizer.ggml.scores"));
  }
  std::vector<TokenType> types;
  if (file.Has("tokenizer.ggml.token_type")) {
    RS_ASSIGN_OR_RETURN(std::vector<int64_t> raw, file.GetIntArray("tokenizer.ggml.token_type"));
    types.reserve(raw.size());
    for (int64_t t : raw) {
      // Unknown type numbers behave as undefined, as in llama.cpp.
      types.push_back(t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::kUndefined);
    }
  }
  auto result = FromLists(std::move(tokens), std::move(scores), std::move(types));
  if (!result.ok()) {
    return Status(result.status().code(), file.name() + ": " + result.status().message());
  }
  return result;
}

Result<Vocab> Vocab::FromLists(std::vector<std::string> tokens, std::vector<float> scores,
                               std::vector<TokenType> types) {
  if (tokens.empty()) return Status::InvalidArgument("tokenizer.ggml.tokens is empty");
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return Status::OutOfRange("tokenizer.ggml.tokens has more than 2^31-1 entries");
  }
  if (!scores.empty() && scores.size() < tokens.size()) {
    return Status::Corrupt("tokenizer.ggml.scores has " + std::to_string(scores.size()) + " entries for " +
                           std::to_string(tokens.size()) + " tokens");
  }
  if (!types.empty() && types.size() < tokens.size()) {
    return Status::Corrupt("tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                           " entries for " + std::to_string(tokens.size()) + " tokens");
  }
  Vocab v;
  v.texts_ = std::move(tokens);
  v.scores_ = std::move(scores);
  v.scores_.resize(v.texts_.size(), 0.0f);
  v.types_ = std::move(types);
  v.types_.resize(v.texts_.size(), TokenType::kNormal);
  RS_RETURN_IF_ERROR(v.BuildIndex());
  return v;
}

Status Vocab::BuildIndex() {
  for (size_t i = 0; i < texts_.size(); ++i) {
    if (texts_[i].empty()) texts_[i] = "[EMPTY_" + std::to_string(i) + "]";
  }
  index_.reserve(texts_.size());
  for (size_t i = 0; i < texts_.size(); ++i) {
    auto [it, inserted] = index_.emplace(std::string_view(texts_[i]), static_cast<int32_t>(i));
    if (!inserted) {
      return Status::Corrupt("duplicate token text '" + texts_[i] + "' at ids " + std::to_string(it->second) +
                             " and " + std::to_string(i));
    }
  }
  return Status::Ok();
}

}  // namespace radixserve::tokenizer
