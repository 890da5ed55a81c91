#include "tools/bench/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "tools/bench/arrival.h"
#include "tools/bench/progress.h"
#include "tools/bench/server_probe.h"
#include "tools/bench/server_tokenizer.h"

namespace radixserve::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

void Note(const BenchConfig& c, const std::string& msg) {
  if (c.log_out != nullptr) std::fprintf(c.log_out, "bench: %s\n", msg.c_str());
}

// One unit of dispatch: a single prompt, or a conversation whose turns go one after another.
struct WorkItem {
  PromptInput prompt;              // single prompt
  std::vector<std::string> turns;  // conversation
  int32_t output_len = 0;
  int64_t num_requests() const { return turns.empty() ? 1 : static_cast<int64_t>(turns.size()); }
};

// Caps in-flight work items; unlimited when cap <= 0.
class ConcurrencyLimit {
 public:
  explicit ConcurrencyLimit(int32_t cap) : cap_(cap) {}
  void Acquire() {
    if (cap_ <= 0) return;
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return in_flight_ < cap_; });
    ++in_flight_;
  }
  void Release() {
    if (cap_ <= 0) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      --in_flight_;
    }
    cv_.notify_one();
  }

 private:
  const int32_t cap_;
  std::mutex mu_;
  std::condition_variable cv_;
  int32_t in_flight_ = 0;
};

// Finds a vocabulary size key anywhere in a JSON document.
std::optional<int32_t> FindVocabSize(const json& j) {
  if (j.is_object()) {
    for (const char* key : {"vocab_size", "n_vocab"})
      if (auto it = j.find(key); it != j.end() && it->is_number_integer() && it->get<int64_t>() > 0)
        return it->get<int32_t>();
  }
  if (j.is_object() || j.is_array())
    for (const json& v : j)
      if (auto found = FindVocabSize(v)) return found;
  return std::nullopt;
}

Result<VocabRange> DiscoverVocab(const BenchConfig& c, const HttpEndpoint& ep, const ServerTokenizer& tok) {
  VocabRange v;
  if (c.vocab_size > 0) {
    v.hi = c.vocab_size;
  } else {
    std::optional<int32_t> size;
    for (const char* path : {"/get_server_info", "/v1/models"}) {
      auto j = FetchJson(ep, path, c.api_key);
      if (j.ok() && (size = FindVocabSize(*j))) break;
    }
    // Last resort, after the metadata (llama.cpp's /v1/models has n_vocab): bisect on /detokenize.
    if (!size) {
      auto probed = tok.ProbeVocabSize();
      if (probed.ok()) size = *probed;
      else Note(c, "cannot probe the vocabulary size: " + probed.status().message());
    }
    if (!size) return Status::InvalidArgument("cannot learn the server's vocabulary size; pass --vocab-size");
    v.hi = *size;
  }
  if (v.hi < 2) return Status::InvalidArgument("vocabulary size " + std::to_string(v.hi) + " is too small");
  v.lo = std::min<int32_t>(3, v.hi - 1);
  if (auto bos = tok.BosId()) v.bos_id = *bos;
  Note(c, "vocabulary: ids [" + std::to_string(v.lo) + ", " + std::to_string(v.hi) + "), BOS " +
              std::to_string(v.bos_id));
  return v;
}

// Turns the dataset into work items; id prompts become exact-length text when text is to be sent.
Result<std::vector<WorkItem>> PrepareWork(const BenchConfig& c, const HttpEndpoint& ep, std::mt19937_64& rng) {
  ServerTokenizer tok(ep, c.api_key);
  std::vector<BenchRequest> requests;
  VocabRange vocab;
  if (c.dataset == DatasetKind::kJsonl) {
    RS_ASSIGN_OR_RETURN(requests, LoadJsonlFile(c.jsonl_path, c.jsonl_output_len));
    if (c.num_prompts > 0 && requests.size() > static_cast<size_t>(c.num_prompts))
      requests.resize(static_cast<size_t>(c.num_prompts));
  } else {
    RS_ASSIGN_OR_RETURN(vocab, DiscoverVocab(c, ep, tok));
    switch (c.dataset) {
      case DatasetKind::kRandom: {
        RandomDatasetOptions o = c.random;
        o.num_prompts = c.num_prompts;
        requests = MakeRandomDataset(o, vocab, rng);
        break;
      }
      case DatasetKind::kSharedPrefix: requests = MakeSharedPrefixDataset(c.gsp, vocab, rng); break;
      case DatasetKind::kPrefix: {
        PrefixDatasetOptions o = c.prefix;
        o.num_prompts = c.num_prompts;
        requests = MakePrefixDataset(o, vocab, rng);
        break;
      }
      case DatasetKind::kMixed: requests = MakeMixedDataset(c.mixed, vocab, rng); break;
      case DatasetKind::kJsonl: break;
    }
  }
  if (requests.empty()) return Status::InvalidArgument("the workload has no requests");

  const bool want_text = c.backend == Backend::kOpenAI || c.text_prompts;
  bool text_ok = false;
  if (want_text && !requests.front().segments.empty()) {
    // Exact-length text needs both endpoints; without them token ids go as the prompt.
    Status probe = tok.Detokenize({vocab.lo}).status();
    if (probe.ok()) probe = tok.Tokenize("a", true).status();
    if (probe.ok()) text_ok = true;
    else Note(c, "no usable /tokenize and /detokenize (" + probe.message() + "); sending token ids as the prompt");
  }
  std::map<const void*, std::string> segment_text;  // shared segments are detokenized once
  std::vector<WorkItem> items;
  items.reserve(requests.size());
  for (const BenchRequest& r : requests) {
    WorkItem w;
    w.output_len = r.output_len;
    w.prompt.output_len = r.output_len;
    w.prompt.expected_prompt_len = r.prompt_ids_len();
    if (r.is_conversation()) {
      w.turns = r.turns;
    } else if (r.segments.empty()) {
      w.prompt.text = r.text;
    } else if (text_ok) {
      std::string prefix;
      for (size_t i = 0; i + 1 < r.segments.size(); ++i) {
        auto it = segment_text.find(r.segments[i].get());
        if (it == segment_text.end()) {
          RS_ASSIGN_OR_RETURN(std::string t, tok.Detokenize(*r.segments[i]));
          it = segment_text.emplace(r.segments[i].get(), std::move(t)).first;
        }
        prefix += it->second;
      }
      RS_ASSIGN_OR_RETURN(std::string unique, tok.FitText(prefix, *r.segments.back(), r.prompt_ids_len(), vocab, rng));
      w.prompt.text = prefix + unique;
    } else {
      w.prompt.ids = r.PromptIds();
      w.prompt.use_ids = true;
    }
    items.push_back(std::move(w));
  }
  return items;
}

// Runs one work item; a conversation stops at its first failed turn.
std::vector<RequestOutcome> RunItem(const ClientOptions& client, const WorkItem& w, Clock::time_point run_start,
                                    Progress* progress) {
  std::vector<RequestOutcome> out;
  auto send = [&](const PromptInput& p) {
    const double start_s = std::chrono::duration<double>(Clock::now() - run_start).count();
    RequestOutcome o = SendRequest(client, p);
    o.start_s = start_s;
    if (progress) progress->RequestDone(o.ok());
    out.push_back(std::move(o));
    return out.back().ok();
  };
  if (w.turns.empty()) {
    send(w.prompt);
    return out;
  }
  std::string history;
  for (const std::string& turn : w.turns) {
    if (!history.empty()) history += "\n";
    history += turn;
    PromptInput p;
    p.text = history;
    p.output_len = w.output_len;
    if (!send(p)) break;
    history += out.back().output_text;
  }
  return out;
}

}  // namespace

Result<DatasetKind> ParseDatasetKind(const std::string& name) {
  if (name == "random") return DatasetKind::kRandom;
  if (name == "generated-shared-prefix" || name == "gsp") return DatasetKind::kSharedPrefix;
  if (name == "prefix") return DatasetKind::kPrefix;
  if (name == "mixed") return DatasetKind::kMixed;
  if (name == "jsonl") return DatasetKind::kJsonl;
  return Status::InvalidArgument("unknown dataset \"" + name + "\" (random, generated-shared-prefix, prefix, mixed, jsonl)");
}

const char* DatasetKindName(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kRandom: return "random";
    case DatasetKind::kSharedPrefix: return "generated-shared-prefix";
    case DatasetKind::kPrefix: return "prefix";
    case DatasetKind::kMixed: return "mixed";
    case DatasetKind::kJsonl: return "jsonl";
  }
  return "?";
}

Result<Backend> ParseBackend(const std::string& name) {
  if (name == "radixserve" || name == "sglang") return Backend::kRadixserve;
  if (name == "openai") return Backend::kOpenAI;
  return Status::InvalidArgument("unknown backend \"" + name + "\" (radixserve, openai)");
}

const char* BackendName(Backend backend) { return backend == Backend::kRadixserve ? "radixserve" : "openai"; }

Result<BenchRun> RunBench(const BenchConfig& c) {
  if (c.dataset == DatasetKind::kJsonl && c.jsonl_path.empty())
    return Status::InvalidArgument("the jsonl dataset needs --dataset-path");
  if (c.num_prompts < 1 && c.dataset != DatasetKind::kSharedPrefix && c.dataset != DatasetKind::kJsonl &&
      c.dataset != DatasetKind::kMixed)
    return Status::InvalidArgument("--num-prompts must be at least 1");
  RS_ASSIGN_OR_RETURN(HttpEndpoint ep, ParseBaseUrl(c.base_url));
  std::mt19937_64 rng(c.seed);

  ClientOptions client;
  client.endpoint = ep;
  client.backend = c.backend;
  client.model = c.model;
  client.api_key = c.api_key;
  client.timeout_ms = c.timeout_s * 1000;
  client.ignore_eos = c.ignore_eos;
  if (c.backend == Backend::kOpenAI && client.model.empty()) {
    auto models = FetchJson(ep, "/v1/models", c.api_key);
    if (models.ok() && models->contains("data") && (*models)["data"].is_array() && !(*models)["data"].empty() &&
        (*models)["data"][0].contains("id") && (*models)["data"][0]["id"].is_string())
      client.model = (*models)["data"][0]["id"].get<std::string>();
  }

  RS_ASSIGN_OR_RETURN(std::vector<WorkItem> items, PrepareWork(c, ep, rng));

  // Warm-up: the first prompt, short, not measured. A failure here means the server cannot serve.
  for (int32_t i = 0; i < c.warmup_requests; ++i) {
    WorkItem w = items.front();
    if (!w.turns.empty()) {
      w.prompt.text = w.turns.front();
      w.turns.clear();
    }
    w.prompt.output_len = std::min(w.output_len, 32);
    RequestOutcome o = SendRequest(client, w.prompt);
    if (!o.ok()) return Status::Unavailable("warm-up request failed (" + std::string(FailureKindName(o.failure)) + "): " + o.error);
  }

  auto before = FetchMetrics(ep, c.api_key);
  int64_t total_requests = 0;
  for (const WorkItem& w : items) total_requests += w.num_requests();
  const std::vector<double> arrivals = ArrivalTimes(items.size(), c.request_rate, rng);

  Progress progress(c.progress_out, c.progress_tty, total_requests);
  ConcurrencyLimit limit(c.max_concurrency);
  std::vector<std::vector<RequestOutcome>> results(items.size());
  std::mutex end_mu;
  Clock::time_point last_end;
  std::vector<std::thread> threads;
  threads.reserve(items.size());
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; i < items.size(); ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(arrivals[i])));
    limit.Acquire();
    threads.emplace_back([&, i] {
      results[i] = RunItem(client, items[i], start, &progress);
      {
        std::lock_guard<std::mutex> l(end_mu);
        last_end = std::max(last_end, Clock::now());
      }
      limit.Release();
    });
  }
  for (std::thread& t : threads) t.join();
  progress.Close();
  const double duration_s = std::chrono::duration<double>(last_end - start).count();

  BenchRun run;
  for (auto& r : results)
    for (RequestOutcome& o : r) run.outcomes.push_back(std::move(o));
  BenchReport& rep = run.report;
  rep.backend = BackendName(c.backend);
  rep.dataset = DatasetKindName(c.dataset);
  rep.request_rate = c.request_rate > 0 ? c.request_rate : std::numeric_limits<double>::infinity();
  rep.max_concurrency = c.max_concurrency;
  if (c.dataset == DatasetKind::kMixed) rep.short_prompt_max = c.mixed.short_len;
  ComputeRequestFigures(run.outcomes, duration_s, &rep);
  auto after = FetchMetrics(ep, c.api_key);
  if (before.ok() && after.ok()) {
    rep.have_metrics = true;
    rep.cache = ComputeCacheFigures(*before, *after);
  }
  auto info = FetchJson(ep, "/get_server_info", c.api_key);
  if (info.ok()) {
    rep.have_server_info = true;
    rep.scheduler_overhead = SchedulerOverhead(*info);
  }
  return run;
}

nlohmann::json RunToJson(const BenchRun& run) {
  json j = ReportToJson(run.report);
  json reqs = json::array();
  for (const RequestOutcome& o : run.outcomes) {
    json r = {{"start_s", o.start_s}, {"ok", o.ok()}};
    if (o.ok()) {
      r["ttft_ms"] = o.ttft_s * 1e3;
      r["latency_ms"] = o.latency_s * 1e3;
      r["prompt_tokens"] = o.prompt_tokens;
      r["output_tokens"] = o.output_tokens;
      if (o.cached_tokens >= 0) r["cached_tokens"] = o.cached_tokens;
      json itl = json::array();
      for (double g : o.itl_s) itl.push_back(g * 1e3);
      r["itl_ms"] = std::move(itl);
    } else {
      r["failure"] = FailureKindName(o.failure);
      if (o.http_status) r["http_status"] = o.http_status;
      r["error"] = o.error;
    }
    reqs.push_back(std::move(r));
  }
  j["requests"] = std::move(reqs);
  return j;
}

}  // namespace radixserve::bench
