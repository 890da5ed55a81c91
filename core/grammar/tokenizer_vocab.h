// The TokenVocab of a model's tokenizer: each token's bytes as they appear in output text;
// control, user-defined and unknown tokens never match a grammar; end-of-generation tokens are
// the EOS a grammar allows where it may end. Stateless; thread-safe.
#pragma once

#include <memory>

#include "core/grammar/token_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {

std::shared_ptr<const TokenVocab> TokenVocabOf(const Tokenizer& tokenizer);

}  // namespace radixserve::grammar
