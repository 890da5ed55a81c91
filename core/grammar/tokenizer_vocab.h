// The TokenVocab of a model's tokenizer: each token's bytes as they appear in output text;
// control, user-defined and unknown tokens never match a grammar; end-of-generation tokens are
// the EOS a grammar allows where it may end. Stateless; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/grammar/token_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {

std::shared_ptr<const TokenVocab> TokenVocabOf(const Tokenizer& tokenizer);

// The ids of `text` as a model would generate it after a prompt: the tokenizer's own ids, except
// that a SentencePiece vocabulary's space prefix (added at the start of a text, never in the
// middle of an output) comes off the first token. For tests and benchmarks that feed real text
// to a matcher.
std::vector<int32_t> EncodeAsOutput(const Tokenizer& tokenizer, const std::string& text);

}  // namespace radixserve::grammar
