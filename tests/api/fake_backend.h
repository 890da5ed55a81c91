// FakeBackend: a deterministic ApiBackend for the HTTP layer's unit tests.
//
// Tokens are bytes (id = byte + 3, BOS = 1 when asked). Generation runs on
// one stepping thread, like a scheduler: every step, each active request
// gets one more token (id 100 + k % 26, text 'a' + k % 26) until
// max_new_tokens (finish "length"). A prompt containing "FAIL" finishes with
// an abort (HTTP 400). Abort(rid) finishes the request with an abort and is
// recorded. With a script (set_script), every request outputs the script's text
// instead, `piece` bytes per step, and ends on EOS (finish "stop") after its
// last piece, or by length first. Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/api/backend.h"

namespace radixserve::api::testing {

class FakeBackend : public ApiBackend {
 public:
  explicit FakeBackend(std::chrono::microseconds step = std::chrono::microseconds(1000)) : step_(step) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeBackend() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::atomic<bool> ready{true};
  std::atomic<int32_t> context_length{64};

  bool Ready() override { return ready; }
  int32_t ContextLength() override { return context_length; }

  Result<std::vector<int32_t>> Tokenize(std::string_view text, bool add_special_tokens) override {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids.push_back(1);
    for (unsigned char c : text) ids.push_back(c + 3);
    return ids;
  }
  Result<std::string> Detokenize(std::span<const int32_t> ids, bool skip_special_tokens) override {
    std::string out;
    for (int32_t id : ids) {
      if (id < 3) {
        if (!skip_special_tokens) out += "<s>";
      } else if (id < 259) {
        out += static_cast<char>(id - 3);
      } else {
        return Status::InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary");
      }
    }
    return out;
  }

  Status Submit(const GenerateRequest& request, std::shared_ptr<ResponseSink> sink) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (reject_submits_) return Status::ResourceExhausted("queue is full");
    submitted_.push_back(request);
    Active a{request, std::move(sink)};
    a.fail = request.text.find("FAIL") != std::string::npos;
    active_.push_back(std::move(a));
    cv_.notify_all();
    return Status::Ok();
  }
  void Abort(const std::string& rid) override {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_.push_back(rid);
    for (Active& a : active_)
      if (a.req.rid == rid) a.aborted = true;
    cv_.notify_all();
  }

  Result<std::string> ServerInfoJson() override { return std::string("{\"model\": \"fake\"}"); }
  Result<std::string> MetricsText() override { return std::string("radixserve_num_running_reqs 0\n"); }
  Status FlushCache() override {
    flushes_++;
    return Status::Ok();
  }

  // Test helpers.
  void set_script(std::string text, size_t piece) {
    std::lock_guard<std::mutex> lock(mu_);
    script_ = std::move(text);
    piece_ = piece;
  }
  void set_reject_submits(bool reject) {
    std::lock_guard<std::mutex> lock(mu_);
    reject_submits_ = reject;
  }
  std::vector<GenerateRequest> submitted() {
    std::lock_guard<std::mutex> lock(mu_);
    return submitted_;
  }
  std::vector<std::string> aborted() {
    std::lock_guard<std::mutex> lock(mu_);
    return aborted_;
  }
  // Waits (up to a generous limit, so a broken server fails instead of hanging) until rid is aborted.
  bool WaitForAbort(const std::string& rid) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      return std::find(aborted_.begin(), aborted_.end(), rid) != aborted_.end();
    });
  }
  int active_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(active_.size());
  }
  std::atomic<int> flushes_{0};

 private:
  struct Active {
    GenerateRequest req;
    std::shared_ptr<ResponseSink> sink;
    int32_t generated = 0;
    bool fail = false;
    bool aborted = false;
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (active_.empty()) {
        cv_.wait(lock, [this] { return stop_ || !active_.empty(); });
        continue;
      }
      cv_.wait_for(lock, step_, [this] { return stop_; });
      for (auto it = active_.begin(); it != active_.end();) {
        if (Step(*it)) it = active_.erase(it);
        else ++it;
      }
      cv_.notify_all();
    }
  }

  // Emits one output; true when it was the last.
  bool Step(Active& a) {
    GenerateOutput out;
    out.prompt_tokens = static_cast<int32_t>(a.req.input_ids.size());
    out.cached_tokens = out.prompt_tokens > 4 ? 4 : 0;
    if (a.aborted || a.fail) {
      out.completion_tokens = a.generated;
      out.finish.kind = FinishKind::kAbort;
      out.finish.message = a.fail ? "the fake backend refused this prompt" : "aborted";
      out.finish.status_code = a.fail ? 400 : 500;
      a.sink->OnOutput(std::move(out));
      return true;
    }
    if (a.generated >= a.req.spec.sampling.max_new_tokens) {
      out.completion_tokens = a.generated;
      out.finish.kind = FinishKind::kLength;
      out.finish.length = a.generated;
      a.sink->OnOutput(std::move(out));
      return true;
    }
    int32_t k = a.generated++;
    int32_t id = 100 + k % 26;
    std::string text(1, static_cast<char>('a' + k % 26));
    if (!script_.empty()) {
      const size_t at = static_cast<size_t>(k) * piece_;
      text = script_.substr(at, piece_);
      id = 3 + static_cast<unsigned char>(text[0]);
      if (at + piece_ >= script_.size()) {
        out.token_ids.push_back(id);
        out.text_delta = text;
        out.completion_tokens = a.generated;
        out.finish.kind = FinishKind::kMatchedToken;
        out.finish.matched_token = 2;
        a.sink->OnOutput(std::move(out));
        return true;
      }
    }
    out.token_ids.push_back(id);
    out.text_delta = text;
    out.completion_tokens = a.generated;
    if (a.req.spec.sampling.logprobs >= 0) {
      TokenLogprob lp{id, -0.25f * static_cast<float>(k % 4), text, {}};
      for (int32_t t = 0; t < a.req.spec.sampling.logprobs; ++t)
        lp.top.push_back({id + t, -0.25f * static_cast<float>(t), std::string(1, static_cast<char>('a' + (k + t) % 26))});
      out.logprobs.push_back(std::move(lp));
    }
    if (a.generated >= a.req.spec.sampling.max_new_tokens) {  // the last token carries the finish, like the engine
      out.finish.kind = FinishKind::kLength;
      out.finish.length = a.generated;
      a.sink->OnOutput(std::move(out));
      return true;
    }
    a.sink->OnOutput(std::move(out));
    return false;
  }

  std::chrono::microseconds step_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool reject_submits_ = false;
  std::string script_;
  size_t piece_ = 1;
  std::vector<Active> active_;
  std::vector<GenerateRequest> submitted_;
  std::vector<std::string> aborted_;
  std::thread thread_;
};

}  // namespace radixserve::api::testing
