#include "core/grammar/tokenizer_vocab.h"

#include <string>
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

}  // namespace radixserve::grammar
