// `radixserve generate`: loads a GGUF model and its tokenizer, completes one
// prompt on the CPU and prints the text; speed goes to stderr.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/builtin_model/builtin_model.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/cpu_features.h"
#include "core/sampling/sampler.h"
#include "core/tokenizer/tokenizer.h"
#include "tools/command.h"

namespace radixserve::tools {
namespace {

struct GenerateOptions {
  std::string model;
  std::string prompt;
  std::string prompt_ids;  // "1,15,27": token ids instead of text
  bool print_ids = false;
  SamplingParams sampling;
  int threads = 2;
  std::string kv_type = "f32";
  bool ignore_eos = false;
  int logprobs = -1;
};

using Clock = std::chrono::steady_clock;

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "generate: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

// "1,15,27" -> {1, 15, 27}; each id must be in [0, vocab).
Result<std::vector<int32_t>> ParseTokenIds(const std::string& text, int32_t vocab) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || errno != 0 || *end != '\0')
      return Status::InvalidArgument("'" + item + "' is not a token id (expected comma-separated integers)");
    if (v < 0 || v >= vocab)
      return Status::InvalidArgument("token id " + item + " is outside the vocabulary [0, " + std::to_string(vocab) +
                                     ")");
    ids.push_back(static_cast<int32_t>(v));
    pos = comma + 1;
  }
  return ids;
}

int RunGenerate(GenerateOptions o) {
  if (o.prompt.empty() && o.prompt_ids.empty()) {
    std::fprintf(stderr, "generate: give --prompt TEXT or --prompt-ids ID,ID,...\n");
    return 2;
  }
  o.sampling.ignore_eos = o.ignore_eos;
  o.sampling.logprobs = o.logprobs;
  if (Status s = o.sampling.Validate(); !s.ok()) return Fail("bad sampling parameters", s);

  if (o.model.empty()) {
    auto builtin = builtin_model::EnsureDefaultModel();
    if (!builtin.ok()) return Fail("cannot write the built-in model", builtin.status());
    std::fprintf(stderr, "generate: no --model given: using the built-in default model %s (%s)\n",
                 builtin_model::kName, builtin->c_str());
    o.model = *builtin;
  }
  auto file = gguf::GgufFile::Open(o.model);
  if (!file.ok()) return Fail("cannot open model", file.status());
  std::shared_ptr<const gguf::GgufFile> gguf(std::move(file).value());
  auto tokenizer = Tokenizer::FromGguf(*gguf);
  if (!tokenizer.ok()) return Fail("cannot load tokenizer", tokenizer.status());
  const Result<model::KvType> kv_type = model::ParseKvType(o.kv_type);
  if (!kv_type.ok()) {
    std::fprintf(stderr, "generate: --kv-type: %s\n", kv_type.status().message().c_str());
    return 2;
  }
  std::fprintf(stderr, "generate: %s\n", kernels::SystemInfo().c_str());
  model::ModelOptions mo;
  mo.num_threads = o.threads;
  mo.kv_type = *kv_type;
  auto loaded = model::LlamaModel::Load(gguf, mo);
  if (!loaded.ok()) return Fail("cannot load model", loaded.status());
  model::LlamaModel& m = **loaded;
  const model::LlamaConfig& c = m.config();

  std::vector<int32_t> prompt;
  if (!o.prompt_ids.empty()) {
    auto ids = ParseTokenIds(o.prompt_ids, c.vocab_size);
    if (!ids.ok()) {
      std::fprintf(stderr, "generate: --prompt-ids: %s\n", ids.status().message().c_str());
      return 2;
    }
    prompt = std::move(ids).value();
  } else {
    prompt = (*tokenizer)->Encode(o.prompt, /*add_special=*/true, /*parse_special=*/true);
  }
  if (prompt.empty()) {
    std::fprintf(stderr, "generate: the prompt encodes to no tokens\n");
    return 1;
  }
  const int64_t total = static_cast<int64_t>(prompt.size()) + o.sampling.max_new_tokens;
  if (total > c.context_length) {
    std::fprintf(stderr, "generate: prompt (%zu tokens) + max tokens (%d) exceeds the context length %d\n",
                 prompt.size(), o.sampling.max_new_tokens, c.context_length);
    return 1;
  }
  auto kv = m.CreateKvCache(total);
  if (!kv.ok()) return Fail("cannot allocate the KV cache", kv.status());
  std::vector<int32_t> slots(total);
  for (int64_t i = 0; i < total; ++i) slots[i] = static_cast<int32_t>(i);

  sampling::Sampler sampler(c.vocab_size);
  const uint64_t seed = o.sampling.has_seed ? o.sampling.seed : static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  sampling::SamplerState state(seed, prompt);
  std::vector<float> logits(c.vocab_size);
  std::vector<int32_t> generated;
  std::vector<int32_t> next = prompt;
  std::vector<int32_t> suppress;
  const int32_t eos = (*tokenizer)->eos_id();
  int32_t cached = 0;
  std::string printed;
  auto t_start = Clock::now();
  Clock::time_point t_first;
  for (int step = 0; step < o.sampling.max_new_tokens; ++step) {
    model::SequenceInput in{cached, next, std::span<const int32_t>(slots.data(), cached + next.size())};
    Status st = m.Forward(std::span<const model::SequenceInput>(&in, 1), **kv, logits);
    if (!st.ok()) return Fail("forward failed", st);
    if (step == 0) t_first = Clock::now();
    cached += static_cast<int32_t>(next.size());
    suppress.clear();
    if (static_cast<int>(generated.size()) < o.sampling.min_new_tokens && eos >= 0) suppress.push_back(eos);
    sampling::SampleResult r = sampler.Sample(o.sampling, logits, state, suppress);
    state.Accept(r.token);
    generated.push_back(r.token);
    // Print the text that became complete (decode the whole generation, emit the new suffix).
    std::string text = (*tokenizer)->DecodeWindow(generated, /*skip_special=*/true);
    if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
      std::fwrite(text.data() + printed.size(), 1, text.size() - printed.size(), stdout);
      std::fflush(stdout);
      printed = std::move(text);
    }
    if (o.logprobs >= 0) {
      std::fprintf(stderr, "[%d] token %d %.4f", step, r.token, r.logprob);
      for (int i = 0; i < r.num_top; ++i) std::fprintf(stderr, " %d:%.4f", r.top[i].token, r.top[i].logprob);
      std::fprintf(stderr, "\n");
    }
    if (!o.ignore_eos && (*tokenizer)->IsEog(r.token)) break;
    next = {r.token};
  }
  std::printf("\n");
  if (o.print_ids) {  // the last line: the generated ids as a JSON array
    std::string line = "[";
    for (size_t i = 0; i < generated.size(); ++i) line += (i ? "," : "") + std::to_string(generated[i]);
    std::printf("%s]\n", line.c_str());
  }
  std::fflush(stdout);
  auto t_end = Clock::now();
  const double prefill_s = std::chrono::duration<double>(t_first - t_start).count();
  const double decode_s = std::chrono::duration<double>(t_end - t_first).count();
  std::fprintf(stderr, "prompt %zu tokens: %.1f tok/s; generated %zu tokens: %.1f tok/s (%d threads)\n", prompt.size(),
               prompt.size() / prefill_s, generated.size(),
               generated.size() > 1 ? (generated.size() - 1) / decode_s : 0.0, m.num_threads());
  return 0;
}

CommandRegistrar generate_registrar({"generate", "Complete a prompt with a GGUF model on the CPU",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<GenerateOptions>();
                        o->sampling.max_new_tokens = 64;
                        app.add_option("-m,--model", o->model, "GGUF model path (default: the built-in stories260K)");
                        auto* text = app.add_option("-p,--prompt", o->prompt, "Prompt text");
                        auto* ids = app.add_option("--prompt-ids", o->prompt_ids,
                                                   "Prompt as token ids, e.g. 1,15,27 (no tokenizer involved)");
                        text->excludes(ids);
                        app.add_flag("--print-ids", o->print_ids,
                                     "Print the generated token ids as a JSON array on the last line");
                        app.add_option("-n,--max-tokens", o->sampling.max_new_tokens, "Tokens to generate")
                            ->capture_default_str();
                        app.add_option("--temperature", o->sampling.temperature, "0 = greedy")->capture_default_str();
                        app.add_option("--top-k", o->sampling.top_k, "-1 = all");
                        app.add_option("--top-p", o->sampling.top_p)->capture_default_str();
                        app.add_option("--min-p", o->sampling.min_p)->capture_default_str();
                        app.add_option("--repeat-penalty", o->sampling.repetition_penalty)->capture_default_str();
                        app.add_option("--frequency-penalty", o->sampling.frequency_penalty)->capture_default_str();
                        app.add_option("--presence-penalty", o->sampling.presence_penalty)->capture_default_str();
                        app.add_option_function<uint64_t>(
                            "--seed", [o](uint64_t s) { o->sampling.seed = s, o->sampling.has_seed = true; },
                            "RNG seed (default: time)");
                        app.add_option("--threads", o->threads, "Compute threads")->capture_default_str();
                        app.add_option("--kv-type", o->kv_type, "KV cache element type: f32 | f16 | q8_0 | q4_0")->capture_default_str();
                        app.add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-sequence");
                        app.add_option("--logprobs", o->logprobs, "Print the chosen token's logprob and the top N");
                        return [o] { return RunGenerate(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
