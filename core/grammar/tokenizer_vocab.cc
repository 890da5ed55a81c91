#include "core/grammar/tokenizer_vocab.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace radixserve::grammar {

std::shared_ptr<const TokenVocab> TokenVocabOf(const Tokenizer& tokenizer) {
  const int32_t n = tokenizer.vocab_size();
  std::vector<std::string> pieces(n);
  std::vector<int32_t> special, eos;
  for (int32_t id = 0; id < n; ++id) {
    pieces[id] = std::string(tokenizer.TokenToPiece(id));
    if (tokenizer.IsSpecial(id) || tokenizer.IsControl(id)) special.push_back(id);
    if (tokenizer.IsEog(id)) eos.push_back(id);
  }
  return TokenVocab::Create(std::move(pieces), special, eos);
}

std::vector<int32_t> EncodeAsOutput(const Tokenizer& tokenizer, const std::string& text) {
  std::vector<int32_t> ids = tokenizer.Encode(text, /*add_special=*/false, /*parse_special=*/false);
  const std::string_view first = ids.empty() ? std::string_view() : tokenizer.TokenToPiece(ids[0]);
  if (first.empty() || first[0] != ' ' || text.empty() || text[0] == ' ') return ids;
  // Re-encode the first piece without its space after a newline, and keep what follows the newline.
  std::vector<int32_t> head = tokenizer.Encode("\n" + std::string(first.substr(1)), false, false);
  size_t k = 0;
  while (k < head.size() && tokenizer.TokenToPiece(head[k]) != "\n") ++k;
  std::vector<int32_t> out(head.begin() + std::min(k + 1, head.size()), head.end());
  out.insert(out.end(), ids.begin() + 1, ids.end());
  return out;
}

}  // namespace radixserve::grammar
