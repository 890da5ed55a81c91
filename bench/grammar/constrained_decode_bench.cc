// constrained_decode_bench: end-to-end decode speed with structured output vs without, on the CPU.
//
// Generates the "medium" model (dim 768, 12 layers, vocab 32000; deterministic noise weights) with
// the project's generator, carrying the tokenizer of ggml-vocab-llama-spm.gguf so that the grammar
// runs over a real 32k vocabulary. Then, in this one process, it serves batches of 1 and 16
// concurrent sequences through the real Scheduler (overlap loop, LPM policy, radix cache: the
// served defaults) over the real ModelWorker, as the scheduler node drives it, in two modes:
//   unconstrained: max_new_tokens tokens per sequence, ignore_eos (the weights are noise, so an
//                  early EOS would only be chance);
//   constrained:   the same requests with a JSON schema (an object whose "items" array needs 40
//                  strings, so it cannot end early); a sequence stops at max_new_tokens, or at the
//                  EOS the grammar allows once the object is complete.
// Sampling is temperature 1 (top-k/p off) with a fixed seed per sequence, so every run of a mode
// produces the same tokens. The modes alternate (order flipped every round so that drift on a
// shared machine hits both alike) for --rounds rounds after one untimed warm-up run of each (which
// also compiles the schema into the worker's grammar cache). A run's figure is end-to-end:
// tokens generated / (time from Submit to the scheduler going idle), which includes the short
// prompts' prefill. The table shows the median run of each mode and their ratio.
//
//   constrained_decode_bench [--type q4_0] [--threads 2] [--tokens 128] [--rounds 3]
//                            [--batches 1,16] [--schema records|strings|tools] [--overlap 1|0] [--vocab PATH] [--dir /tmp]
//                            [--model PATH]
//
// --model measures an existing GGUF (it must carry a tokenizer) instead of generating one.
// --schema: records (default; mostly structure tokens), strings (mostly inside one string), or
// tools: the lazy grammar of tool_choice "auto" with ten tools (Hermes syntax): free text until
// "<tool_call>", so it measures what a dormant lazy grammar costs per token.
//
// Then, with tools (issue 40), time to first token of a chat prompt carrying ten tools, rendered by
// Qwen2.5's chat template (../shared/templates): a first request, then the same tools with another
// question, whose tools prefix comes from the radix cache (cached / prompt tokens shown).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/chat_prompt.h"
#include "core/gguf/gguf_reader.h"
#include "core/grammar/grammar_cache.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/model/llama_model.h"
#include "core/model/served_context.h"
#include "core/modelgen/model_generator.h"
#include "core/scheduler/params.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tool_calls/call_grammar.h"
#include "core/worker/model_worker.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/lpm/lpm_policy.h"

namespace radixserve {
namespace {

using Clock = std::chrono::steady_clock;

// --schema strings: one long array of strings (the matcher mostly stays in one string state).
// --schema records (default): objects of an integer range, a short string and a boolean, so
// most tokens are structure: the costly case for the mask.
constexpr const char* kStringsSchema =
    R"({"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"minItems":40}},)"
    R"("required":["items"]})";
constexpr const char* kRecordsSchema =
    R"({"type":"array","minItems":30,"items":{"type":"object","properties":{"id":{"type":"integer","minimum":0,)"
    R"("maximum":9999},"name":{"type":"string","maxLength":10},"ok":{"type":"boolean"}},)"
    R"("required":["id","name","ok"],"additionalProperties":false}})";

std::vector<int> SplitInts(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One run's outcome: its time and, per sequence, the tokens it generated and how it ended.
struct RunResult {
  double secs = 0;
  double first_output_s = -1;  // Submit to the first output of any sequence
  int32_t prompt_tokens = 0;   // of the last sequence reported
  int32_t cached_tokens = 0;
  int64_t tokens = 0;
  std::map<uint64_t, std::vector<int32_t>> outputs;
  std::map<uint64_t, FinishReason> finish;
  double tok_s() const { return secs > 0 ? double(tokens) / secs : 0; }
};

// The engine as the scheduler and worker nodes build it, in one process.
class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(const std::string& model_path, int threads, bool overlap) {
    auto e = std::unique_ptr<Engine>(new Engine());
    RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(model_path));
    std::shared_ptr<const gguf::GgufFile> shared(std::move(file));
    RS_ASSIGN_OR_RETURN(e->tokenizer_, Tokenizer::FromGguf(*shared));
    model::ModelOptions mo;  // the worker node's: only the thread count is set
    mo.num_threads = threads;
    RS_ASSIGN_OR_RETURN(auto loaded, model::LlamaModel::Load(shared, mo));
    e->model_ = std::shared_ptr<model::LlamaModel>(std::move(loaded));
    RS_ASSIGN_OR_RETURN(e->context_, model::ServedContext(*shared, 0));

    // The scheduler node's config: defaults, its context rule, and EOS from the tokenizer.
    sched::SchedulerConfig c;
    c.overlap = overlap;
    c.max_req_len = e->context_ + 1;
    c.vocab_size = e->tokenizer_->vocab_size();
    for (int32_t id = 0; id < e->tokenizer_->vocab_size(); ++id)
      if (e->tokenizer_->IsEog(id)) c.eos_token_ids.push_back(id);

    // The worker node's: KV slots and rows from the same defaults, end-of-generation ids from
    // the metadata, and the grammar cache over the model's tokenizer.
    RS_ASSIGN_OR_RETURN(e->worker_, ModelWorker::Create(e->model_, WorkerShape::For(c.max_total_tokens,
                                                                                     c.max_running_requests,
                                                                                     e->context_)));
    std::vector<int32_t> eog;
    for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
      if (auto id = shared->GetInt(key); id.ok()) eog.push_back(static_cast<int32_t>(*id));
    e->worker_->set_end_of_generation_ids(std::move(eog));
    e->grammars_ = std::make_shared<grammar::GrammarCache>(grammar::TokenVocabOf(*e->tokenizer_), 64);
    e->worker_->set_grammar_cache(e->grammars_);

    // The served default plugins ("lpm" with its default parameters, "radix"), linked in rather
    // than dlopen'ed: the same code the plugin host would load.
    sched::Params pp;
    RS_RETURN_IF_ERROR(sched::ResolveParams(std::span(sched::kLpmParams, sched::kNumLpmParams),
                                            std::map<std::string, std::string>{}, &pp));
    RS_ASSIGN_OR_RETURN(auto policy, sched::MakeLpmPolicy(pp));
    const Tokenizer* tok = e->tokenizer_.get();
    Engine* raw = e.get();
    e->scheduler_ = std::make_unique<sched::Scheduler>(
        c, sched::OwnCache(std::make_unique<sched::RadixCache>()), sched::OwnPolicy(std::move(policy)),
        [raw](const sched::BatchTokenIdOut& out) { raw->OnOutput(out); },
        [tok](std::span<const int32_t> ids) { return tok->DecodeWindow(ids, true); });
    e->driver_ = std::make_unique<sched::StepDriver>(e->scheduler_.get(), e->worker_.get());
    return e;
  }

  // Runs `n` sequences at once, each from its own prompt (the same prompts in every run, so both
  // modes see the same prefix-cache state after the warm-up), constrained by `spec` when active.
  Result<RunResult> Run(int n, int max_new_tokens, const grammar::GrammarSpec& spec) {
    RunResult r;
    current_ = &r;
    const auto t0 = start_ = Clock::now();
    for (int i = 0; i < n; ++i) {
      sched::TokenizedRequest g;
      g.rid = ++next_rid_;
      rid_index_[g.rid] = static_cast<uint64_t>(i);
      g.input_ids = tokenizer_->Encode("Sequence " + std::to_string(i) +
                                           ": list forty short product names as a JSON object with an \"items\" array.",
                                       true, false);
      g.spec.sampling.temperature = 1.0f;
      g.spec.sampling.seed = 1000 + static_cast<uint64_t>(i);
      g.spec.sampling.has_seed = true;
      g.spec.sampling.max_new_tokens = max_new_tokens;
      // Unconstrained output is noise: never let a chance EOS shorten it. Constrained, EOS is only
      // sampleable where the schema is complete, and must end the request there.
      g.spec.sampling.ignore_eos = !spec.active();
      g.spec.grammar = spec;
      scheduler_->Submit(std::move(g));
    }
    Status s = driver_->RunUntilIdle();
    r.secs = std::chrono::duration<double>(Clock::now() - t0).count();
    current_ = nullptr;
    RS_RETURN_IF_ERROR(s);
    return r;
  }

  // One request of `ids`, max_new_tokens 1, greedy: its time to first token and cache hit.
  Result<RunResult> RunPrompt(std::vector<int32_t> ids) {
    RunResult r;
    current_ = &r;
    start_ = Clock::now();
    sched::TokenizedRequest g;
    g.rid = ++next_rid_;
    rid_index_[g.rid] = 0;
    g.input_ids = std::move(ids);
    g.spec.sampling.temperature = 0.0f;
    g.spec.sampling.max_new_tokens = 1;
    g.spec.sampling.ignore_eos = true;
    scheduler_->Submit(std::move(g));
    Status s = driver_->RunUntilIdle();
    r.secs = std::chrono::duration<double>(Clock::now() - start_).count();
    current_ = nullptr;
    RS_RETURN_IF_ERROR(s);
    return r;
  }

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  grammar::GrammarCache& grammars() { return *grammars_; }
  const sched::Scheduler& scheduler() const { return *scheduler_; }
  int32_t context() const { return context_; }

 private:
  Engine() = default;
  void OnOutput(const sched::BatchTokenIdOut& out) {
    if (current_ == nullptr) return;
    if (current_->first_output_s < 0 && !out.outputs.empty())
      current_->first_output_s = std::chrono::duration<double>(Clock::now() - start_).count();
    for (const auto& o : out.outputs) {
      if (o.prompt_tokens > 0) {
        current_->prompt_tokens = o.prompt_tokens;
        current_->cached_tokens = o.cached_tokens;
      }
      const uint64_t i = rid_index_[o.rid];
      auto& ids = current_->outputs[i];
      ids.insert(ids.end(), o.output_ids.begin(), o.output_ids.end());
      current_->tokens += static_cast<int64_t>(o.output_ids.size());
      if (o.finished) current_->finish[i] = o.finish;
    }
  }

  std::unique_ptr<Tokenizer> tokenizer_;
  std::shared_ptr<model::LlamaModel> model_;
  int32_t context_ = 0;
  std::unique_ptr<ModelWorker> worker_;
  std::shared_ptr<grammar::GrammarCache> grammars_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<sched::StepDriver> driver_;  // after scheduler_: destroyed first
  RunResult* current_ = nullptr;
  Clock::time_point start_;
  uint64_t next_rid_ = 0;
  std::map<uint64_t, uint64_t> rid_index_;  // request id -> sequence index in its run
};

// Problems a run shows (aborted sequences, wrong lengths, output its grammar refuses): "" if none.
std::string Check(Engine& e, const RunResult& r, int n, int max_new_tokens, const grammar::GrammarSpec& spec) {
  std::string problems;
  if (static_cast<int>(r.finish.size()) != n)
    problems += std::to_string(n - static_cast<int>(r.finish.size())) + " sequence(s) never finished; ";
  for (const auto& [i, f] : r.finish) {
    const auto it = r.outputs.find(i);
    const size_t len = it == r.outputs.end() ? 0 : it->second.size();
    if (f.kind == FinishKind::kAbort)
      problems += "seq " + std::to_string(i) + " aborted (" + std::to_string(f.status_code) + "): " + f.message + "; ";
    else if (!spec.active() && len != static_cast<size_t>(max_new_tokens))
      problems += "seq " + std::to_string(i) + " made " + std::to_string(len) + " tokens; ";
  }
  if (spec.active()) {
    // Replays each output through a fresh matcher: every token must be one the schema allowed.
    auto compiled = e.grammars().Get(spec);
    if (!compiled.ok()) return problems + "cannot compile the schema: " + compiled.status().message();
    for (const auto& [i, ids] : r.outputs) {
      grammar::GrammarMatcher m(*compiled);
      for (size_t k = 0; k < ids.size(); ++k)
        if (!m.AcceptToken(ids[k])) {
          problems += "seq " + std::to_string(i) + ": token " + std::to_string(k) + " (id " + std::to_string(ids[k]) +
                      ") breaks the schema; ";
          break;
        }
    }
  }
  return problems;
}

// Ten tools of the kind agents are given, with JSON-schema parameters.
nlohmann::ordered_json TenTools() {
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  const char* names[] = {"get_weather", "search_web", "send_email", "create_event", "read_file",
                         "move_robot",  "set_light",  "play_music", "add_todo",     "translate"};
  for (int i = 0; i < 10; ++i) {
    nlohmann::ordered_json params = {
        {"type", "object"},
        {"properties",
         {{"target", {{"type", "string"}, {"description", "What the call acts on, e.g. a city or a file name."}}},
          {"count", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}}},
          {"mode", {{"type", "string"}, {"enum", {"fast", "careful"}}}}}},
        {"required", {"target"}}};
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", names[i]},
                       {"description", std::string("Tool number ") + std::to_string(i) + ": " + names[i] + "."},
                       {"parameters", params}}}});
  }
  return tools;
}

// The grammar tool_choice "auto" gives these tools (what the server sends the worker).
std::string ToolsSpec() {
  std::vector<tool_calls::CallableTool> callable;
  for (const auto& t : TenTools()) callable.push_back({t["function"]["name"], t["function"]["parameters"]});
  tool_calls::CallGrammarOptions o;
  o.mode = tool_calls::CallMode::kAuto;
  return tool_calls::CallGrammarSpec(tool_calls::ToolCallFamily::kHermes, callable, o).value();
}

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  std::string type = "q4_0", vocab = std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf";
  std::string dir = std::filesystem::temp_directory_path().string(), model_path, batches = "1,16";
  std::string grammar_choice = "records";
  bool overlap = true;
  int threads = 2, tokens = 128, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--type") type = v;
    else if (k == "--threads") threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--tokens") tokens = std::max(1, std::atoi(v.c_str()));
    else if (k == "--rounds") rounds = std::max(1, std::atoi(v.c_str()));
    else if (k == "--batches") batches = v;
    else if (k == "--vocab") vocab = v;
    else if (k == "--dir") dir = v;
    else if (k == "--model") model_path = v;
    else if (k == "--schema") grammar_choice = v;
    else if (k == "--overlap") overlap = v != "0";
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0 || (grammar_choice != "records" && grammar_choice != "strings" && grammar_choice != "tools")) {
    std::fprintf(stderr,
                 "usage: constrained_decode_bench [--type q4_0] [--threads 2] [--tokens 128] [--rounds 3] "
                 "[--batches 1,16] [--schema records|strings|tools] [--overlap 1|0] [--vocab PATH] [--dir DIR] [--model PATH]\n");
    return 2;
  }

  // The model: generated into a temp file (removed at the end) unless one is given.
  std::string generated;
  if (model_path.empty()) {
    auto spec = modelgen::SpecForSize("medium");
    auto weights = modelgen::ParseWeightType(type);
    if (!spec.ok()) return Fail("model size", spec.status());
    if (!weights.ok()) return Fail("--type", weights.status());
    spec->weights = *weights;
    spec->tokenizer_from = vocab;
    generated = (std::filesystem::path(dir) /
                 ("constrained_decode_bench_" + std::to_string(::getpid()) + "_" + type + ".gguf"))
                    .string();
    const auto t0 = Clock::now();
    if (Status s = modelgen::GenerateModel(*spec, generated); !s.ok()) return Fail("generating the model", s);
    std::printf("generated %s (medium, %s, tokenizer of %s) in %.1f s\n", generated.c_str(), type.c_str(),
                vocab.c_str(), std::chrono::duration<double>(Clock::now() - t0).count());
    model_path = generated;
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty()) std::filesystem::remove(path);
    }
  } cleanup{generated};

  auto engine = Engine::Create(model_path, threads, overlap);
  if (!engine.ok()) return Fail("loading the engine", engine.status());
  Engine& e = **engine;
  const grammar::GrammarSpec none{};
  const bool tools = grammar_choice == "tools";
  const std::string schema_text = tools                        ? ToolsSpec()
                                  : grammar_choice == "strings" ? kStringsSchema
                                                                : kRecordsSchema;
  const grammar::GrammarSpec schema{tools ? grammar::GrammarKind::kStructural : grammar::GrammarKind::kJsonSchema,
                                    schema_text};
  // Compile time of the grammar on its own (a fresh cache), so the figure is not lost in a run.
  const std::string grammar_desc = tools ? "lazy grammar of ten tools (tool_choice auto, Hermes syntax: free text "
                                           "until <tool_call>)"
                                         : "JSON schema " + schema_text;
  {
    grammar::GrammarCache fresh(grammar::TokenVocabOf(e.tokenizer()), 1);
    const auto t0 = Clock::now();
    auto compiled = fresh.Get(schema);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!compiled.ok()) return Fail("compiling the schema", compiled.status());
    std::printf("the schema compiles in %.1f ms (fresh grammar cache; runs hit the worker's cache after the "
                "warm-up)\n", ms);
  }

  const std::string cpu = CpuModel();
  std::printf("CPU: %s; %d compute threads; served context %d; %d new tokens per sequence; %d rounds\n", cpu.c_str(),
              threads, e.context(), tokens, rounds);
  std::printf("driven through the in-process Scheduler (%s loop, lpm, radix) + ModelWorker\n",
              overlap ? "overlap" : "normal");
  std::fflush(stdout);

  struct Row {
    int n = 0;
    std::vector<double> unc, con;
    double con_tokens_per_seq = 0;
    std::map<std::string, int> con_finish;
    std::string sample;
  };
  std::vector<Row> rows;
  std::vector<std::string> problems;
  for (int n : SplitInts(batches)) {
    Row row;
    row.n = n;
    // Warm-up, untimed: first touches, the prompts into the radix cache, the schema compiled.
    for (const grammar::GrammarSpec* spec : {&none, static_cast<const grammar::GrammarSpec*>(&schema)}) {
      auto w = e.Run(n, tokens, *spec);
      if (!w.ok()) return Fail("warm-up run", w.status());
      if (std::string p = Check(e, *w, n, tokens, *spec); !p.empty())
        problems.push_back("n=" + std::to_string(n) + (spec->active() ? " constrained" : " unconstrained") +
                           " warm-up: " + p);
    }
    bool deterministic = true;
    std::map<uint64_t, std::vector<int32_t>> con_reference;
    for (int round = 0; round < rounds; ++round) {
      // Alternate, flipping the order each round.
      const bool constrained_first = round % 2 == 1;
      for (int k = 0; k < 2; ++k) {
        const bool constrained = (k == 0) == constrained_first;
        const grammar::GrammarSpec& spec = constrained ? schema : none;
        auto r = e.Run(n, tokens, spec);
        if (!r.ok()) return Fail(constrained ? "constrained run" : "unconstrained run", r.status());
        if (std::string p = Check(e, *r, n, tokens, spec); !p.empty())
          problems.push_back("n=" + std::to_string(n) + (constrained ? " constrained" : " unconstrained") + " round " +
                             std::to_string(round + 1) + ": " + p);
        std::printf("  n=%-3d round %d %-13s %6lld tokens in %7.3f s = %8.2f tok/s\n", n, round + 1,
                    constrained ? "constrained" : "unconstrained", static_cast<long long>(r->tokens), r->secs,
                    r->tok_s());
        std::fflush(stdout);
        if (!constrained) {
          row.unc.push_back(r->tok_s());
          continue;
        }
        row.con.push_back(r->tok_s());
        if (con_reference.empty()) {  // the first timed constrained run: its figures describe the row
          con_reference = r->outputs;
          row.con_tokens_per_seq = double(r->tokens) / n;
          for (const auto& [i, f] : r->finish)
            ++row.con_finish[f.kind == FinishKind::kLength        ? "length"
                             : f.kind == FinishKind::kMatchedToken ? "eos"
                             : f.kind == FinishKind::kAbort        ? "abort"
                                                                   : "other"];
          if (auto it = r->outputs.find(0); it != r->outputs.end()) row.sample = e.tokenizer().Decode(it->second, true);
        } else if (r->outputs != con_reference) {
          deterministic = false;
        }
      }
    }
    if (!deterministic) problems.push_back("n=" + std::to_string(n) + ": constrained outputs differ between rounds");
    rows.push_back(std::move(row));
  }

  std::printf("\nCPU: %s (%d compute threads), medium model %s, vocab 32000 (llama-spm tokenizer), %d new tokens "
              "per sequence, temperature 1 with a fixed seed per sequence, median of %d rounds\n",
              cpu.c_str(), threads, type.c_str(), tokens, rounds);
  std::printf("constrained by the %s\n\n", grammar_desc.c_str());
  std::printf("| sequences | unconstrained tok/s | constrained tok/s | constrained / unconstrained | constrained tokens/seq "
              "| constrained finish |\n");
  std::printf("|---:|---:|---:|---:|---:|---|\n");
  for (const Row& r : rows) {
    const double u = Median(r.unc), c = Median(r.con);
    std::string finish;
    for (const auto& [k, v] : r.con_finish) finish += (finish.empty() ? "" : ", ") + k + " " + std::to_string(v);
    std::printf("| %d | %.2f | %.2f | %.3f | %.1f | %s |\n", r.n, u, c, u > 0 ? c / u : 0.0, r.con_tokens_per_seq,
                finish.c_str());
  }
  std::printf("\nscheduler: %lld failed batches, %lld retractions, %lld aborted\n",
              static_cast<long long>(e.scheduler().stats().failed_batches),
              static_cast<long long>(e.scheduler().stats().retractions),
              static_cast<long long>(e.scheduler().stats().aborted));
  for (const Row& r : rows) {
    std::string s = r.sample.size() > 200 ? r.sample.substr(0, 200) + "..." : r.sample;
    std::printf("constrained sample (n=%d, sequence 0): %s\n", r.n, s.c_str());
  }
  if (tools) {
    // Time to first token of a prompt with the ten tools (Qwen2.5's template), first and repeated.
    std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
    std::stringstream source;
    source << in.rdbuf();
    auto chat = api::ChatPromptTemplate::FromJinja(source.str(), "Qwen2.5", {});
    if (!chat.ok()) return Fail("the chat template", chat.status());
    std::printf("\ntime to first token with ten tools in the prompt (Qwen2.5's template; one request at a time, "
                "greedy, 1 new token):\n\n| request | prompt tokens | cached tokens | hit rate | TTFT ms |\n"
                "|---|---:|---:|---:|---:|\n");
    const char* questions[] = {"What is the weather in Paris today?", "Please email Bob the minutes.",
                               "Turn the kitchen light on.", "What is the weather in Paris today?"};
    const char* labels[] = {"first (cold)", "same tools, another question", "same tools, a third question",
                            "the first again"};
    for (int q = 0; q < 4; ++q) {
      std::vector<api::ChatMessage> messages = {{"user", questions[q]}};
      auto prompt = chat->Render(messages, TenTools(), true, nullptr);
      if (!prompt.ok()) return Fail("rendering", prompt.status());
      auto r = e.RunPrompt(e.tokenizer().Encode(*prompt, false, true));
      if (!r.ok()) return Fail("ttft run", r.status());
      std::printf("| %s | %d | %d | %.1f %% | %.1f |\n", labels[q], r->prompt_tokens, r->cached_tokens,
                  r->prompt_tokens ? 100.0 * r->cached_tokens / r->prompt_tokens : 0.0, r->first_output_s * 1e3);
    }
  }
  if (problems.empty()) {
    std::printf("checks: every sequence finished; unconstrained ones made exactly %d tokens; every constrained "
                "token was one the schema allows; constrained outputs identical across rounds\n", tokens);
  } else {
    for (const std::string& p : problems) std::printf("PROBLEM: %s\n", p.c_str());
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace
}  // namespace radixserve

int main(int argc, char** argv) { return radixserve::Main(argc, argv); }
