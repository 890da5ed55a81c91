// The built-in SentencePiece-style ("llama" model) vocabulary written into
// generated models that do not copy a tokenizer: <unk>, <s>, </s>, 256 byte
// fallback tokens, single characters and common English words with all
// their prefixes (so that score-ordered merges can build each word).
#pragma once

#include <string>
#include <vector>

namespace radixserve::modelgen {

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;  // 1 normal, 2 unknown, 3 control, 6 byte
};

const Vocab& BuiltinVocab();

}  // namespace radixserve::modelgen
