// `radixserve bench`: a load generator for OpenAI-compatible servers (SGLang bench_serving's workloads
// and figures): prints a report, optionally writes JSON, exits non-zero when any request failed.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>

#include "tools/bench/runner.h"
#include "tools/command.h"

namespace radixserve::tools {
namespace {

struct BenchCliOptions {
  bench::BenchConfig config;
  std::string backend = "radixserve";
  std::string dataset = "random";
  std::string host = "127.0.0.1";
  int port = 30000;
  std::string base_url;
  std::string output_file;
  bool disable_ignore_eos = false;
  bool quiet = false;
};

int RunBenchCommand(BenchCliOptions& o) {
  bench::BenchConfig& c = o.config;
  auto backend = bench::ParseBackend(o.backend);
  auto dataset = bench::ParseDatasetKind(o.dataset);
  if (!backend.ok() || !dataset.ok()) {
    std::fprintf(stderr, "bench: %s\n", (!backend.ok() ? backend.status() : dataset.status()).message().c_str());
    return 2;
  }
  c.backend = *backend;
  c.dataset = *dataset;
  c.base_url = o.base_url.empty() ? "http://" + o.host + ":" + std::to_string(o.port) : o.base_url;
  c.ignore_eos = !o.disable_ignore_eos;
  if (!o.quiet) {
    c.progress_out = stderr;
    c.progress_tty = ::isatty(STDERR_FILENO) == 1;
    c.log_out = stderr;
  }
  auto run = bench::RunBench(c);
  if (!run.ok()) {
    std::fprintf(stderr, "bench: %s\n", run.status().message().c_str());
    return 2;
  }
  std::fputs(bench::FormatReport(run->report).c_str(), stdout);
  std::fflush(stdout);
  if (!o.output_file.empty()) {
    std::ofstream out(o.output_file);
    out << bench::RunToJson(*run).dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "bench: cannot write %s\n", o.output_file.c_str());
      return 2;
    }
  }
  return run->report.failed > 0 ? 1 : 0;
}

CommandRegistrar bench_registrar({"bench", "Load-test a running server (SGLang bench_serving-style workloads and figures)",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<BenchCliOptions>();
                        bench::BenchConfig& c = o->config;
                        app.add_option("--backend", o->backend,
                                       "radixserve (native /generate, token ids) | openai (/v1/completions, text)")
                            ->capture_default_str();
                        app.add_option("--host", o->host, "Server host")->capture_default_str();
                        app.add_option("--port", o->port, "Server port")->capture_default_str();
                        app.add_option("--base-url", o->base_url, "Server URL (overrides --host/--port)");
                        app.add_option("--model", c.model, "Model name for OpenAI requests (default: from /v1/models)");
                        app.add_option("--api-key", c.api_key, "Bearer token");
                        app.add_option("--dataset", o->dataset, "random | generated-shared-prefix | prefix | mixed | jsonl")
                            ->capture_default_str();
                        app.add_option("--dataset-path", c.jsonl_path, "JSONL file for --dataset jsonl");
                        app.add_option("--jsonl-output-len", c.jsonl_output_len,
                                       "Output length of JSONL lines without output_len")->capture_default_str();
                        app.add_option("--num-prompts", c.num_prompts, "Requests (random, prefix; at most, for jsonl)")
                            ->capture_default_str();
                        app.add_option("--random-input-len", c.random.input_len)->capture_default_str();
                        app.add_option("--random-output-len", c.random.output_len)->capture_default_str();
                        app.add_option("--random-range-ratio", c.random.range_ratio,
                                       "Lengths are uniform in [max(1, ratio*L), L]")->capture_default_str();
                        app.add_option("--gsp-num-groups", c.gsp.num_groups)->capture_default_str();
                        app.add_option("--gsp-prompts-per-group", c.gsp.prompts_per_group)->capture_default_str();
                        app.add_option("--gsp-system-prompt-len", c.gsp.system_prompt_len)->capture_default_str();
                        app.add_option("--gsp-question-len", c.gsp.question_len)->capture_default_str();
                        app.add_option("--gsp-output-len", c.gsp.output_len)->capture_default_str();
                        app.add_option("--prefix-len", c.prefix.prefix_len,
                                       "prefix dataset: common prefix tokens (BOS first; 0 = unshared)")
                            ->capture_default_str();
                        app.add_option("--unique-len", c.prefix.unique_len, "prefix dataset: unique tokens per request")
                            ->capture_default_str();
                        app.add_option("--prefix-output-len", c.prefix.output_len)->capture_default_str();
                        app.add_option("--mixed-num-long", c.mixed.num_long, "mixed dataset: long prompts")
                            ->capture_default_str();
                        app.add_option("--mixed-long-len", c.mixed.long_len)->capture_default_str();
                        app.add_option("--mixed-num-short", c.mixed.num_short, "mixed dataset: short prompts")
                            ->capture_default_str();
                        app.add_option("--mixed-short-len", c.mixed.short_len)->capture_default_str();
                        app.add_option("--mixed-output-len", c.mixed.output_len)->capture_default_str();
                        app.add_option("--vocab-size", c.vocab_size, "Token ids to draw from (default: ask the server)");
                        app.add_flag("--text-prompts", c.text_prompts,
                                     "radixserve backend: send exact-length text instead of input_ids");
                        app.add_option("--request-rate", c.request_rate, "Requests per second (Poisson); inf: all at once")
                            ->capture_default_str();
                        app.add_option("--max-concurrency", c.max_concurrency, "Cap on in-flight requests (0: none)")
                            ->capture_default_str();
                        app.add_option("--warmup-requests", c.warmup_requests)->capture_default_str();
                        app.add_option("--seed", c.seed)->capture_default_str();
                        app.add_flag("--disable-ignore-eos", o->disable_ignore_eos, "Let requests stop at EOS");
                        app.add_option("--timeout", c.timeout_s, "Per-request timeout in seconds")->capture_default_str();
                        app.add_option("--output-file", o->output_file, "Write the report and per-request data as JSON");
                        app.add_flag("--quiet", o->quiet, "No progress or setup notes on stderr");
                        return [o] { return RunBenchCommand(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
