// CountingBackend: a deterministic ApiBackend behind the real HTTP server, for the bench's client tests
// until the real pipeline fixture exists.
//
// Tokens are ASCII bytes (id = byte + 3, ids 3..130; BOS = 1 when asked), so /detokenize refuses ids
// >= 131 and the vocabulary size can be probed. A stepping thread gives every active request
// tokens_per_step more tokens per step until max_new_tokens. Every fail_every-th submission is refused
// (HTTP 503), every abort_every-th is aborted mid-stream. Prometheus counters count finished
// requests' tokens like the api node's. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/api/backend.h"

namespace radixserve::bench::testing {

class CountingBackend : public api::ApiBackend {
 public:
  static constexpr int32_t kVocabSize = 131;

  explicit CountingBackend(int32_t tokens_per_step = 1, std::chrono::microseconds step = std::chrono::microseconds(500))
      : tokens_per_step_(tokens_per_step), step_(step) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~CountingBackend() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::atomic<int> fail_every{0};
  std::atomic<int> abort_every{0};
  std::atomic<bool> report_overhead{false};
  std::atomic<int> submissions{0};
  // While closed, requests stop after their first token (tests that streaming is not buffered).
  std::atomic<bool> gate_closed{false};

  bool Ready() override { return true; }
  int32_t ContextLength() override { return 4096; }

  Result<std::vector<int32_t>> Tokenize(std::string_view text, bool add_special_tokens) override {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids.push_back(1);
    for (unsigned char c : text) {
      if (c >= 128) return Status::InvalidArgument("non-ASCII text");
      ids.push_back(c + 3);
    }
    return ids;
  }
  Result<std::string> Detokenize(std::span<const int32_t> ids, bool skip_special_tokens) override {
    std::string out;
    for (int32_t id : ids) {
      if (id < 0 || id >= kVocabSize) return Status::InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary");
      if (id >= 3) out += static_cast<char>(id - 3);
    }
    return out;
  }

  Status Submit(const api::GenerateRequest& request, std::shared_ptr<api::ResponseSink> sink) override {
    const int k = ++submissions;
    if (fail_every > 0 && k % fail_every == 0) return Status::Unavailable("the fake is refusing this one");
    std::lock_guard<std::mutex> l(mu_);
    Active a{request, std::move(sink)};
    a.abort = abort_every > 0 && k % abort_every == 0;
    active_.push_back(std::move(a));
    max_active_ = std::max<int>(max_active_, static_cast<int>(active_.size()));
    texts_.push_back(request.has_text ? request.text : std::string());
    cv_.notify_all();
    return Status::Ok();
  }
  void Abort(const std::string& rid) override {
    std::lock_guard<std::mutex> l(mu_);
    for (Active& a : active_)
      if (a.req.rid == rid) a.abort = true;
  }

  Result<std::string> ServerInfoJson() override {
    if (report_overhead) return std::string(R"({"scheduler": {"stats": {"scheduler_overhead_p50": 0.125}}})");
    return std::string("{\"model\": \"counting\"}");
  }
  Result<std::string> MetricsText() override {
    return "# TYPE radixserve_prompt_tokens_total counter\nradixserve_prompt_tokens_total " +
           std::to_string(prompt_tokens_.load()) + "\nradixserve_generation_tokens_total " +
           std::to_string(generation_tokens_.load()) + "\nradixserve_cached_tokens_total " +
           std::to_string(cached_tokens_.load()) + "\nradixserve_cache_hit_rate 0.5\n";
  }
  Status FlushCache() override { return Status::Ok(); }

  int max_active() {
    std::lock_guard<std::mutex> l(mu_);
    return max_active_;
  }
  std::vector<std::string> texts() {
    std::lock_guard<std::mutex> l(mu_);
    return texts_;
  }
  int64_t prompt_tokens() const { return prompt_tokens_; }
  int64_t generation_tokens() const { return generation_tokens_; }

 private:
  struct Active {
    api::GenerateRequest req;
    std::shared_ptr<api::ResponseSink> sink;
    int32_t generated = 0;
    bool abort = false;
  };

  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      if (active_.empty()) {
        cv_.wait(l, [this] { return stop_ || !active_.empty(); });
        continue;
      }
      cv_.wait_for(l, step_, [this] { return stop_; });
      for (auto it = active_.begin(); it != active_.end();) {
        if (Step(*it)) it = active_.erase(it);
        else ++it;
      }
    }
  }

  // One output for a request; true when it was the last.
  bool Step(Active& a) {
    api::GenerateOutput out;
    out.prompt_tokens = static_cast<int32_t>(a.req.input_ids.size());
    out.cached_tokens = out.prompt_tokens / 2;
    const int32_t max_new = a.req.spec.sampling.max_new_tokens;
    if (a.abort && a.generated > 0) {
      out.completion_tokens = a.generated;
      out.finish.kind = FinishKind::kAbort;
      out.finish.message = "aborted by the fake";
      out.finish.status_code = 500;
      a.sink->OnOutput(std::move(out));
      return true;
    }
    if (gate_closed && a.generated >= 1) return false;
    for (int32_t i = 0; i < tokens_per_step_ && a.generated < max_new; ++i) {
      const int32_t id = 3 + 'a' + a.generated % 26;
      out.token_ids.push_back(id);
      out.text_delta += static_cast<char>(id - 3);
      ++a.generated;
    }
    out.completion_tokens = a.generated;
    const bool done = a.generated >= max_new;
    if (done) {
      out.finish.kind = FinishKind::kLength;
      out.finish.length = max_new;
      // Counted before the final output is delivered, as the api node does.
      prompt_tokens_ += out.prompt_tokens;
      generation_tokens_ += a.generated;
      cached_tokens_ += out.cached_tokens;
    }
    a.sink->OnOutput(std::move(out));
    return done;
  }

  const int32_t tokens_per_step_;
  const std::chrono::microseconds step_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<Active> active_;
  bool stop_ = false;
  int max_active_ = 0;
  std::vector<std::string> texts_;
  std::thread thread_;
  std::atomic<int64_t> prompt_tokens_{0}, generation_tokens_{0}, cached_tokens_{0};
};

}  // namespace radixserve::bench::testing
