// grammar_bench: the structured-output engine's speed over ../shared/jsonschema (one thread).
//
// For each vocabulary named on the command line: every schema is compiled (timed), and each of
// its valid instances is generated as the tokenizer tokenizes it: before every token the mask is
// filled (timed: what a decode step pays per constrained request), then the token is accepted.
// A fresh matcher per instance; the compiled grammar (with the token tables it builds on first
// use) is shared by a schema's instances, as the server's grammar cache shares it between
// requests. Prints per vocabulary: mask time mean / p50 / p99 / max, compile p50 / p99, and the
// counts (schemas compiled, instances walked, instances a token of which was refused).
//
//   grammar_bench [--cases FILE] [--limit N] llama-spm deepseek-llm ...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/compile.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace rs = radixserve;
using Clock = std::chrono::steady_clock;

namespace {

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  std::string cases = std::string(RADIXSERVE_SHARED_DIR) + "/jsonschema/cases.jsonl";
  size_t limit = SIZE_MAX;
  std::vector<std::string> vocabs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      cases = argv[++i];
    } else if (a == "--limit" && i + 1 < argc) {
      limit = std::stoul(argv[++i]);
    } else {
      vocabs.push_back(a);
    }
  }
  if (vocabs.empty()) vocabs = {"llama-spm", "deepseek-llm"};
  std::vector<nlohmann::ordered_json> lines;
  {
    std::ifstream in(cases);
    if (!in) {
      std::fprintf(stderr, "grammar_bench: cannot read %s\n", cases.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(in, line) && lines.size() < limit) lines.push_back(nlohmann::ordered_json::parse(line));
  }
  std::printf("| vocabulary | tokens | schemas compiled | instances | refused instances | masks | mask mean us | p50 us | p99 us | max us | compile p50 ms | compile p99 ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& name : vocabs) {
    auto file = rs::gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf");
    if (!file.ok()) {
      std::fprintf(stderr, "grammar_bench: %s\n", file.status().message().c_str());
      return 1;
    }
    auto tok = rs::Tokenizer::FromGguf(**file);
    if (!tok.ok()) {
      std::fprintf(stderr, "grammar_bench: %s\n", tok.status().message().c_str());
      return 1;
    }
    auto vocab = rs::grammar::TokenVocabOf(**tok);
    // As the server's grammar cache does: token tables shared by the vocabulary's grammars.
    auto shared = std::make_shared<rs::grammar::SharedTables>();
    std::vector<double> mask_us, compile_ms;
    size_t compiled = 0, instances = 0, refused = 0;
    std::vector<uint32_t> mask(vocab->mask_words());
    for (const auto& c : lines) {
      rs::grammar::GrammarSpec spec{rs::grammar::GrammarKind::kJsonSchema, c["schema"].dump()};
      const auto t0 = Clock::now();
      auto g = rs::grammar::CompileSpec(spec);
      if (!g.ok()) continue;
      auto cg = std::make_shared<const rs::grammar::CompiledGrammar>(std::move(g).value(), vocab, shared);
      compile_ms.push_back(Us(Clock::now() - t0) / 1000.0);
      ++compiled;
      for (const auto& inst : c["valid"]) {
        const std::string text = inst.get<std::string>();
        const std::vector<int32_t> ids = rs::grammar::EncodeAsOutput(**tok, text);
        rs::grammar::GrammarMatcher m(cg);
        ++instances;
        bool ok = true;
        for (int32_t id : ids) {
          const auto m0 = Clock::now();
          m.FillNextTokenBitmask(mask.data());
          mask_us.push_back(Us(Clock::now() - m0));
          if (!m.AcceptToken(id)) {
            ok = false;
            break;
          }
        }
        refused += !ok;
      }
    }
    double sum = 0;
    for (double v : mask_us) sum += v;
    const double mean = mask_us.empty() ? 0 : sum / mask_us.size();
    const double mx = mask_us.empty() ? 0 : *std::max_element(mask_us.begin(), mask_us.end());
    std::printf("| %s | %d | %zu / %zu | %zu | %zu | %zu | %.1f | %.1f | %.1f | %.0f | %.2f | %.2f |\n", name.c_str(),
                vocab->size(), compiled, lines.size(), instances, refused, mask_us.size(), mean,
                Percentile(mask_us, 0.5), Percentile(mask_us, 0.99), mx, Percentile(compile_ms, 0.5),
                Percentile(compile_ms, 0.99));
    std::fflush(stdout);
  }
  return 0;
}
