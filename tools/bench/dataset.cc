#include "tools/bench/dataset.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace radixserve::bench {

int32_t BenchRequest::prompt_ids_len() const {
  size_t n = 0;
  for (const TokenSegment& s : segments) n += s->size();
  return static_cast<int32_t>(n);
}

std::vector<int32_t> BenchRequest::PromptIds() const {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(prompt_ids_len()));
  for (const TokenSegment& s : segments) ids.insert(ids.end(), s->begin(), s->end());
  return ids;
}

int64_t UniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  // Rejection sampling removes the modulo bias.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % span;
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return lo + static_cast<int64_t>(x % span);
}

std::pair<int32_t, int32_t> RandomLengthBounds(int32_t full, double ratio) {
  full = std::max<int32_t>(full, 1);
  int32_t lo = static_cast<int32_t>(static_cast<double>(full) * ratio);
  lo = std::clamp<int32_t>(lo, 1, full);
  return {lo, full};
}

std::vector<int32_t> RandomTokens(int32_t n, const VocabRange& vocab, std::mt19937_64& rng) {
  std::vector<int32_t> ids(static_cast<size_t>(std::max<int32_t>(n, 0)));
  for (int32_t& id : ids) id = static_cast<int32_t>(UniformInt(rng, vocab.lo, vocab.hi - 1));
  return ids;
}

std::vector<BenchRequest> MakeRandomDataset(const RandomDatasetOptions& o, const VocabRange& vocab,
                                            std::mt19937_64& rng) {
  auto [in_lo, in_hi] = RandomLengthBounds(o.input_len, o.range_ratio);
  auto [out_lo, out_hi] = RandomLengthBounds(o.output_len, o.range_ratio);
  std::vector<BenchRequest> out(static_cast<size_t>(std::max<int32_t>(o.num_prompts, 0)));
  for (BenchRequest& r : out) {
    const int32_t in = static_cast<int32_t>(UniformInt(rng, in_lo, in_hi));
    r.output_len = static_cast<int32_t>(UniformInt(rng, out_lo, out_hi));
    r.segments.push_back(std::make_shared<const std::vector<int32_t>>(RandomTokens(in, vocab, rng)));
  }
  return out;
}

std::vector<BenchRequest> MakeSharedPrefixDataset(const SharedPrefixDatasetOptions& o, const VocabRange& vocab,
                                                  std::mt19937_64& rng) {
  std::vector<BenchRequest> out;
  out.reserve(static_cast<size_t>(std::max(o.num_groups, 0)) * static_cast<size_t>(std::max(o.prompts_per_group, 0)));
  for (int32_t g = 0; g < o.num_groups; ++g) {
    auto system = std::make_shared<const std::vector<int32_t>>(RandomTokens(o.system_prompt_len, vocab, rng));
    for (int32_t q = 0; q < o.prompts_per_group; ++q) {
      BenchRequest r;
      r.segments = {system, std::make_shared<const std::vector<int32_t>>(RandomTokens(o.question_len, vocab, rng))};
      r.output_len = o.output_len;
      out.push_back(std::move(r));
    }
  }
  Shuffle(out, rng);
  return out;
}

std::vector<BenchRequest> MakePrefixDataset(const PrefixDatasetOptions& o, const VocabRange& vocab,
                                            std::mt19937_64& rng) {
  std::vector<int32_t> prefix_ids;
  if (o.prefix_len > 0) {
    prefix_ids.push_back(vocab.bos_id);
    std::vector<int32_t> rest = RandomTokens(o.prefix_len - 1, vocab, rng);
    prefix_ids.insert(prefix_ids.end(), rest.begin(), rest.end());
  }
  auto prefix = std::make_shared<const std::vector<int32_t>>(std::move(prefix_ids));
  std::vector<BenchRequest> out(static_cast<size_t>(std::max<int32_t>(o.num_prompts, 0)));
  for (BenchRequest& r : out) {
    if (!prefix->empty()) r.segments.push_back(prefix);
    r.segments.push_back(std::make_shared<const std::vector<int32_t>>(RandomTokens(o.unique_len, vocab, rng)));
    r.output_len = o.output_len;
  }
  return out;
}

std::vector<BenchRequest> MakeMixedDataset(const MixedDatasetOptions& o, const VocabRange& vocab,
                                           std::mt19937_64& rng) {
  const int32_t num_long = std::max<int32_t>(o.num_long, 0), num_short = std::max<int32_t>(o.num_short, 0);
  const int32_t total = num_long + num_short;
  std::vector<BenchRequest> out(static_cast<size_t>(total));
  // Long prompt k at position floor(k * total / num_long): 0 first, then evenly spread.
  std::vector<uint8_t> is_long(static_cast<size_t>(total), 0);
  for (int32_t k = 0; k < num_long; ++k) is_long[static_cast<size_t>(int64_t(k) * total / num_long)] = 1;
  for (int32_t i = 0; i < total; ++i) {
    BenchRequest& r = out[static_cast<size_t>(i)];
    r.segments.push_back(std::make_shared<const std::vector<int32_t>>(
        RandomTokens(is_long[static_cast<size_t>(i)] ? o.long_len : o.short_len, vocab, rng)));
    r.output_len = o.output_len;
  }
  return out;
}

Result<std::vector<BenchRequest>> ParseJsonl(std::string_view content, int32_t default_output_len) {
  using nlohmann::json;
  std::vector<BenchRequest> out;
  size_t line_no = 0;
  while (!content.empty()) {
    size_t nl = content.find('\n');
    std::string_view line = content.substr(0, nl);
    content.remove_prefix(nl == std::string_view::npos ? content.size() : nl + 1);
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::InvalidArgument(where + "not valid JSON");
    if (!j.is_object()) return Status::InvalidArgument(where + "expected a JSON object");
    BenchRequest r;
    r.output_len = default_output_len;
    if (auto it = j.find("output_len"); it != j.end()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 30))
        return Status::InvalidArgument(where + "\"output_len\" must be a positive integer");
      r.output_len = it->get<int32_t>();
    }
    auto prompt = j.find("prompt");
    auto turns = j.find("turns");
    if ((prompt != j.end()) == (turns != j.end()))
      return Status::InvalidArgument(where + "needs exactly one of \"prompt\" (a string) or \"turns\" (strings)");
    if (prompt != j.end()) {
      if (!prompt->is_string() || prompt->get_ref<const std::string&>().empty())
        return Status::InvalidArgument(where + "\"prompt\" must be a non-empty string");
      r.text = prompt->get<std::string>();
    } else {
      if (!turns->is_array() || turns->empty())
        return Status::InvalidArgument(where + "\"turns\" must be a non-empty array of strings");
      for (const json& t : *turns) {
        if (!t.is_string() || t.get_ref<const std::string&>().empty())
          return Status::InvalidArgument(where + "every turn must be a non-empty string");
        r.turns.push_back(t.get<std::string>());
      }
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return Status::InvalidArgument("no prompts in the JSONL input");
  return out;
}

Result<std::vector<BenchRequest>> LoadJsonlFile(const std::string& path, int32_t default_output_len) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = ParseJsonl(ss.str(), default_output_len);
  if (!r.ok()) return Status(r.status().code(), path + ": " + r.status().message());
  return r;
}

}  // namespace radixserve::bench
