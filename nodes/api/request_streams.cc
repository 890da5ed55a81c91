#include "nodes/api/request_streams.h"

#include <vector>

namespace radixserve::nodes {
namespace {

using Clock = std::chrono::steady_clock;
using transport::OutputEntry;

FinishReason ToFinishReason(const OutputEntry& e, std::span<const char> text) {
  std::string finish_text(text.data() + e.finish_text_offset, e.finish_text_len);
  switch (e.finish_kind > kMaxFinishKind ? FinishKind::kNone : static_cast<FinishKind>(e.finish_kind)) {
    case FinishKind::kMatchedToken: return FinishReason::Token(e.matched_token);
    case FinishKind::kMatchedStr: return FinishReason::Str(std::move(finish_text));
    case FinishKind::kLength: return FinishReason::Length(e.finish_length);
    case FinishKind::kAbort:
      return FinishReason::Abort(finish_text.empty() ? "request aborted" : finish_text,
                                 e.status_code > 0 ? e.status_code : 500);
    case FinishKind::kNone: break;
  }
  // Finished without a (known) reason: report it, never hang.
  return FinishReason::Abort("request ended without a finish reason", 500);
}

}  // namespace

Result<uint64_t> RequestStreams::Open(const api::GenerateRequest& request, std::shared_ptr<api::ResponseSink> sink,
                                      int32_t group, router::Router::Ticket route, int64_t max_queued) {
  std::lock_guard<std::mutex> l(mu_);
  if (by_name_.count(request.rid)) {
    if (router_) router_->Finished(route);
    return Status::InvalidArgument("request id '" + request.rid + "' is already in use");
  }
  // A bounded queue: past the limit the client is told at once to come back (503, Retry-After).
  if (static_cast<int64_t>(pending_.size()) >= max_queued) {
    if (router_) router_->Finished(route);
    metrics_->requests_rejected_overload.fetch_add(1, std::memory_order_relaxed);
    return Status::Unavailable("the server is overloaded: " + std::to_string(pending_.size()) +
                               " requests in flight (max_queued_requests); retry later");
  }
  metrics_->requests_in_flight.fetch_add(1, std::memory_order_relaxed);  // with the entry, before any output
  const uint64_t rid = next_rid_++;
  Pending p;
  p.cls = request.priority_class;
  p.rid = request.rid;
  p.sink = std::move(sink);
  p.start = p.last_token = Clock::now();
  p.return_logprob = request.spec.return_logprob;
  p.group = group;
  p.route = route;
  pending_.emplace(rid, std::move(p));
  by_name_[request.rid] = rid;
  return rid;
}

void RequestStreams::Cancel(uint64_t rid) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pending_.find(rid);
  if (it == pending_.end()) return;
  CountEnded(it->second);
  by_name_.erase(it->second.rid);
  pending_.erase(it);
}

std::optional<std::pair<uint64_t, int32_t>> RequestStreams::Find(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return std::make_pair(it->second, pending_.at(it->second).group);
}

size_t RequestStreams::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return pending_.size();
}

void RequestStreams::Deliver(const transport::BatchStrOutMsg& msg, const Tokenizer& tokenizer) {
  const auto* m = &msg;
  auto entries = transport::ArrayOf<OutputEntry>(m, m->entries);
  auto ids = transport::ArrayOf<int32_t>(m, m->ids);
  auto logprobs = transport::ArrayOf<float>(m, m->logprobs);
  auto text = transport::ArrayOf<char>(m, m->text);
  auto top_ids = transport::ArrayOf<int32_t>(m, m->top_ids);
  auto top_lps = transport::ArrayOf<float>(m, m->top_logprobs);
  auto now = Clock::now();
  for (const OutputEntry& e : entries) {
    std::shared_ptr<api::ResponseSink> sink;
    api::GenerateOutput out;
    out.text_delta.assign(text.data() + e.text_offset, e.text_len);
    auto new_ids = ids.subspan(e.ids_offset, e.ids_count);
    out.token_ids.assign(new_ids.begin(), new_ids.end());
    out.prompt_tokens = e.prompt_tokens;
    out.completion_tokens = e.completion_tokens;
    out.cached_tokens = e.cached_tokens;
    if (e.finished) out.finish = ToFinishReason(e, text);
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = pending_.find(e.rid);
      if (it == pending_.end()) continue;  // a request this api node no longer tracks
      Pending& p = it->second;
      sink = p.sink;
      if (p.return_logprob) {
        auto lp = logprobs.subspan(e.logprob_offset, e.logprob_count);
        for (size_t i = 0; i < lp.size() && i < out.token_ids.size(); ++i) {
          api::TokenLogprob t;
          t.token_id = out.token_ids[i];
          t.logprob = lp[i];
          t.token = std::string(tokenizer.TokenToPiece(t.token_id));
          for (int32_t k = 0; k < e.top_n; ++k) {
            size_t at = e.top_offset + i * static_cast<size_t>(e.top_n) + k;
            if (at >= e.top_offset + e.top_count || top_ids[at] < 0) continue;
            api::TopLogprob alt;
            alt.token_id = top_ids[at];
            alt.logprob = top_lps[at];
            alt.token = std::string(tokenizer.TokenToPiece(alt.token_id));
            t.top.push_back(std::move(alt));
          }
          out.logprobs.push_back(std::move(t));
        }
      }
      if (!out.token_ids.empty()) {
        double gap = std::chrono::duration<double>(now - p.last_token).count();
        if (!p.got_first) {
          metrics_->ttft.Observe(gap);
          metrics_->by_class[static_cast<size_t>(p.cls)].ttft.Observe(gap);
          p.got_first = true;
        } else {
          // Several tokens in one output share the gap evenly (stream_interval > 1).
          for (size_t i = 0; i < out.token_ids.size(); ++i) metrics_->inter_token.Observe(gap / out.token_ids.size());
        }
        p.last_token = now;
      }
      if (e.finished) {
        const double e2e = std::chrono::duration<double>(now - p.start).count();
        metrics_->e2e.Observe(e2e);
        metrics_->by_class[static_cast<size_t>(p.cls)].e2e.Observe(e2e);
        metrics_->prompt_tokens.fetch_add(e.prompt_tokens, std::memory_order_relaxed);
        metrics_->generation_tokens.fetch_add(e.completion_tokens, std::memory_order_relaxed);
        metrics_->cached_tokens.fetch_add(e.cached_tokens, std::memory_order_relaxed);
        metrics_->requests_finished.fetch_add(1, std::memory_order_relaxed);
        if (out.finish.kind == FinishKind::kAbort) metrics_->requests_aborted.fetch_add(1, std::memory_order_relaxed);
        CountEnded(p);
        by_name_.erase(p.rid);
        pending_.erase(it);
      }
    }
    sink->OnOutput(std::move(out));
  }
}

void RequestStreams::CountEnded(const Pending& p) {
  metrics_->requests_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (router_) router_->Finished(p.route);
}

void RequestStreams::Fail(int32_t group, const std::string& why) {
  std::vector<Pending> failed;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (group >= 0 && it->second.group != group) {
        ++it;
        continue;
      }
      CountEnded(it->second);
      by_name_.erase(it->second.rid);
      failed.push_back(std::move(it->second));
      it = pending_.erase(it);
    }
  }
  for (Pending& p : failed) {
    api::GenerateOutput out;
    out.finish.kind = FinishKind::kAbort;
    out.finish.message = why;
    out.finish.status_code = 503;
    p.sink->OnOutput(std::move(out));
  }
}

}  // namespace radixserve::nodes
