// The server's own tokenizer, reached over HTTP (/tokenize, /detokenize;
// radixserve's and llama.cpp's field names both work), used to turn token-id
// prompts into text prompts of an exact token length for text-only endpoints.
// Thread-safe: stateless apart from the immutable endpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "tools/bench/dataset.h"
#include "tools/bench/http_client.h"

namespace radixserve::bench {

class ServerTokenizer {
 public:
  ServerTokenizer(HttpEndpoint endpoint, std::string api_key)
      : endpoint_(std::move(endpoint)), api_key_(std::move(api_key)) {}

  // add_special: as the server tokenizes a plain completion prompt (BOS first for llama models).
  Result<std::vector<int32_t>> Tokenize(const std::string& text, bool add_special) const;
  Result<std::string> Detokenize(const std::vector<int32_t>& ids) const;

  // The vocabulary size, found by bisecting on which ids /detokenize accepts (radixserve refuses
  // ids outside the vocabulary with a 4xx).
  Result<int32_t> ProbeVocabSize() const;
  // The BOS id the server adds to plain prompts, if it adds one.
  std::optional<int32_t> BosId() const;

  // Text that, appended to prefix_text, tokenizes (with special tokens) to exactly target_total tokens:
  // starts from `ids`, then trims or extends with random ids from `vocab` and retries. Returns the
  // closest text found when no exact one turns up within a few rounds.
  Result<std::string> FitText(const std::string& prefix_text, std::vector<int32_t> ids, int32_t target_total,
                              const VocabRange& vocab, std::mt19937_64& rng) const;

 private:
  HttpEndpoint endpoint_;
  std::string api_key_;
};

}  // namespace radixserve::bench
