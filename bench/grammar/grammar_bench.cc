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
//
// --lazy: instead, a lazy tool-call grammar (GrammarKind::kStructural, Hermes markup, two tools,
// trigger "<tool_call>") over outputs of free text then calls: per vocabulary, the mean / p99
// time of a mask while dormant (the free text: what lazy decoding pays per token over
// unconstrained decoding) and once active (the calls), and the one-time builds of a dormant mask
// (the plain state, and a state inside a partial trigger).
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
#include "core/grammar/structural.h"
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

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / v.size();
}

// Two tools in Hermes markup, lazy: free text until "<tool_call>".
std::string HermesLazySpec() {
  const std::string weather =
      R"({"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]},)"
      R"("days":{"type":"integer","minimum":1,"maximum":14}},"required":["city","unit"],"additionalProperties":false})";
  const std::string search =
      R"({"type":"object","properties":{"query":{"type":"string","maxLength":200},"limit":{"type":"integer"}},)"
      R"("required":["query"]})";
  const std::string begin = R"("<tool_call>\n{\"name\": \")", args = R"(\", \"arguments\": ")";
  const std::string end = R"("end":"}\n</tool_call>")";
  return R"({"calls":[{"begin":)" + begin + "get_weather" + args + R"(,"schema":)" + weather + "," + end +
         R"(},{"begin":)" + begin + "web_search" + args + R"(,"schema":)" + search + "," + end +
         R"(}],"separator":"\n","max_whitespace":1,"trigger":"<tool_call>"})";
}

// --lazy: one row per vocabulary (see the header).
int RunLazy(const std::string& name, const rs::Tokenizer& tok, std::shared_ptr<const rs::grammar::TokenVocab> vocab) {
  namespace g = rs::grammar;
  const std::string spec = HermesLazySpec();
  std::vector<uint32_t> mask(vocab->mask_words());
  // The one-time builds: a fresh compiled grammar's first dormant mask, then one inside "<tool".
  auto compiled = g::CompileSpec(g::GrammarSpec{g::GrammarKind::kStructural, spec});
  if (!compiled.ok()) {
    std::fprintf(stderr, "grammar_bench: %s\n", compiled.status().ToString().c_str());
    return 1;
  }
  auto cg = std::make_shared<const g::CompiledGrammar>(std::move(compiled).value(), vocab);
  g::GrammarMatcher first(cg);
  auto t0 = Clock::now();
  first.FillNextTokenBitmask(mask.data());
  const double build_plain_ms = Us(Clock::now() - t0) / 1000.0;
  if (!first.AcceptBytes("<tool")) return 1;
  t0 = Clock::now();
  first.FillNextTokenBitmask(mask.data());
  const double build_partial_ms = Us(Clock::now() - t0) / 1000.0;
  const char* cities[] = {"Paris", "San Francisco", "Tokyo", "Berlin", "Reykjavik", "Cape Town", "Lima", "Oslo"};
  const std::string prose =
      "Sure! Let me check the current weather for you. I will look up the forecast and then summarise what "
      "to expect over the next few days, including temperatures, wind and the chance of rain, so that you can "
      "plan your trip with confidence.\n\n";
  std::vector<double> dormant_us, active_us, accept_us;
  size_t refused = 0;
  // Round 0 warms up (it builds the dormant masks of the partial triggers it meets and the token
  // tables of the calls: the one-time costs, reported above); rounds 1-8 are timed.
  for (int round = 0; round <= 8; ++round) {
    for (const char* city : cities) {
      const std::string text = prose + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" +
                               city + "\", \"unit\": \"celsius\", \"days\": 3}}\n</tool_call>\n<tool_call>\n"
                               "{\"name\": \"web_search\", \"arguments\": {\"query\": \"events in " + city +
                               " this week\"}}\n</tool_call>";
      g::GrammarMatcher m(cg);
      for (int32_t id : g::EncodeAsOutput(tok, text)) {
        const bool dormant = m.dormant();
        const auto m0 = Clock::now();
        m.FillNextTokenBitmask(mask.data());
        if (round > 0) (dormant ? dormant_us : active_us).push_back(Us(Clock::now() - m0));
        const auto a0 = Clock::now();
        const bool ok = m.AcceptToken(id);
        if (round > 0 && dormant) accept_us.push_back(Us(Clock::now() - a0));
        if (!ok) {
          ++refused;
          break;
        }
      }
    }
  }
  std::printf("| %s | %d | %.2f | %.2f | %zu | %.2f | %.2f | %.2f | %.3f | %zu | %.1f | %.1f | %.1f | %zu |\n",
              name.c_str(), vocab->size(), build_plain_ms, build_partial_ms, dormant_us.size(), Mean(dormant_us),
              Percentile(dormant_us, 0.5), Percentile(dormant_us, 0.99), Mean(accept_us), active_us.size(),
              Mean(active_us), Percentile(active_us, 0.5), Percentile(active_us, 0.99), refused);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cases = std::string(RADIXSERVE_SHARED_DIR) + "/jsonschema/cases.jsonl";
  size_t limit = SIZE_MAX;
  bool lazy = false;
  std::vector<std::string> vocabs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      cases = argv[++i];
    } else if (a == "--limit" && i + 1 < argc) {
      limit = std::stoul(argv[++i]);
    } else if (a == "--lazy") {
      lazy = true;
    } else {
      vocabs.push_back(a);
    }
  }
  if (vocabs.empty()) vocabs = {"llama-spm", "deepseek-llm"};
  std::vector<nlohmann::ordered_json> lines;
  if (!lazy) {
    std::ifstream in(cases);
    if (!in) {
      std::fprintf(stderr, "grammar_bench: cannot read %s\n", cases.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(in, line) && lines.size() < limit) lines.push_back(nlohmann::ordered_json::parse(line));
  }
  if (lazy) {
    std::printf("| vocabulary | tokens | dormant mask build ms | partial-trigger mask build ms | dormant masks "
                "| dormant mean us | p50 us | p99 us | dormant accept mean us | active masks | active mean us "
                "| p50 us | p99 us | refused outputs |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  } else {
    std::printf("| vocabulary | tokens | schemas compiled | instances | refused instances | masks | mask mean us | p50 us | p99 us | max us | compile p50 ms | compile p99 ms |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
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
    if (lazy) {
      if (RunLazy(name, **tok, vocab) != 0) return 1;
      continue;
    }
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
