// Workloads of the load generator: what each request asks for.
//
// Synthetic prompts are token ids drawn from the server's vocabulary, kept
// as segments so that requests sharing a prefix share the segment object
// (the text path detokenizes each shared segment once). JSONL files give
// text prompts and multi-turn conversations. All generators are pure
// functions of their options and the seeded generator.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/status.h"

namespace radixserve::bench {

using TokenSegment = std::shared_ptr<const std::vector<int32_t>>;

struct BenchRequest {
  std::vector<TokenSegment> segments;  // a token-id prompt: their concatenation
  std::string text;                    // a text prompt (JSONL); used when segments is empty
  std::vector<std::string> turns;      // a conversation (JSONL): one request per turn, history carried over
  int32_t output_len = 0;

  bool is_conversation() const { return !turns.empty(); }
  int32_t prompt_ids_len() const;
  std::vector<int32_t> PromptIds() const;
};

// Token ids prompts may use: [lo, hi); bos_id starts the prefix dataset's prompts.
struct VocabRange {
  int32_t lo = 3;  // skips the usual unk/bos/eos ids
  int32_t hi = 32000;
  int32_t bos_id = 1;
};

// A uniform integer in [lo, hi], the same on every platform for a given generator state.
int64_t UniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi);
// Fisher-Yates with UniformInt: reproducible across standard libraries.
template <typename T>
void Shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(UniformInt(rng, 0, i - 1))]);
}

// [max(1, floor(full * ratio)), full]: the range random lengths are drawn from.
std::pair<int32_t, int32_t> RandomLengthBounds(int32_t full, double ratio);

std::vector<int32_t> RandomTokens(int32_t n, const VocabRange& vocab, std::mt19937_64& rng);

struct RandomDatasetOptions {
  int32_t num_prompts = 1000;
  int32_t input_len = 1024;
  int32_t output_len = 1024;
  double range_ratio = 0.0;
};
std::vector<BenchRequest> MakeRandomDataset(const RandomDatasetOptions& o, const VocabRange& vocab,
                                            std::mt19937_64& rng);

// generated-shared-prefix: num_groups system prompts, each followed by prompts_per_group questions; shuffled.
struct SharedPrefixDatasetOptions {
  int32_t num_groups = 64;
  int32_t prompts_per_group = 16;
  int32_t system_prompt_len = 2048;
  int32_t question_len = 128;
  int32_t output_len = 256;
};
std::vector<BenchRequest> MakeSharedPrefixDataset(const SharedPrefixDatasetOptions& o, const VocabRange& vocab,
                                                  std::mt19937_64& rng);

// prefix: every prompt is one common prefix of prefix_len tokens (BOS first) plus unique_len unique tokens.
struct PrefixDatasetOptions {
  int32_t num_prompts = 1000;
  int32_t prefix_len = 512;
  int32_t unique_len = 32;
  int32_t output_len = 128;
};
std::vector<BenchRequest> MakePrefixDataset(const PrefixDatasetOptions& o, const VocabRange& vocab,
                                            std::mt19937_64& rng);

// mixed: num_long prompts of long_len tokens spread evenly among num_short of short_len (the first
// request is a long one), no shared prefixes: how much long prompts hold up short ones.
struct MixedDatasetOptions {
  int32_t num_long = 4;
  int32_t long_len = 2000;
  int32_t num_short = 60;
  int32_t short_len = 100;
  int32_t output_len = 32;
};
std::vector<BenchRequest> MakeMixedDataset(const MixedDatasetOptions& o, const VocabRange& vocab,
                                           std::mt19937_64& rng);

// One JSON object per line: {"prompt": "...", "output_len": N} or {"turns": ["q1", "q2", ...], "output_len": N};
// output_len defaults to default_output_len. Blank lines are skipped; errors name the line.
Result<std::vector<BenchRequest>> ParseJsonl(std::string_view content, int32_t default_output_len);
Result<std::vector<BenchRequest>> LoadJsonlFile(const std::string& path, int32_t default_output_len);

}  // namespace radixserve::bench
