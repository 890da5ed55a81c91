#include "core/scheduler/output_streamer.h"

#include <algorithm>

namespace radixserve::sched {

void OutputStreamer::Consider(Req& req) {
  bool should_output;
  if (req.finished()) {
    if (req.finished_output) return;  // overlap double-call guard
    req.finished_output = true;
    should_output = true;
  } else if (req.spec.stream) {
    const int32_t k = req.spec.sampling.stream_interval > 0 ? req.spec.sampling.stream_interval : stream_interval_;
    const int32_t n = req.output_len();
    should_output = k > 1 ? (n % k == 1) : (n % k == 0);
    if (should_output && checker_->TailMayStartStopString(req)) should_output = false;
  } else {
    should_output = req.output_len() > 0 && req.output_len() % force_interval_ == 0;
  }
  if (!should_output) return;
  if (used_ == msg_.outputs.size()) msg_.outputs.emplace_back();
  TokenOutput& o = msg_.outputs[used_++];
  const auto out = req.output_ids();
  o.rid = req.rid;
  o.output_ids.assign(out.begin() + req.sent_output_len, out.end());
  o.prompt_tail.clear();
  if (!req.context_sent) {
    const auto in = req.input_ids();
    const size_t n = std::min<size_t>(kDetokenizerContextTokens, in.size());
    o.prompt_tail.assign(in.end() - static_cast<std::ptrdiff_t>(n), in.end());
    req.context_sent = true;
  }
  o.skip_special_tokens = req.spec.sampling.skip_special_tokens;
  o.output_logprobs.clear();
  if (req.spec.return_logprob && req.sent_output_len < static_cast<int32_t>(req.output_logprobs.size()))
    o.output_logprobs.assign(req.output_logprobs.begin() + req.sent_output_len, req.output_logprobs.end());
  o.top_n = req.spec.top_logprobs_num;
  o.top_ids.clear();
  o.top_logprobs.clear();
  const size_t top_from = static_cast<size_t>(req.sent_output_len) * req.spec.top_logprobs_num;
  if (o.top_n > 0 && top_from < req.output_top_ids.size()) {
    o.top_ids.assign(req.output_top_ids.begin() + top_from, req.output_top_ids.end());
    o.top_logprobs.assign(req.output_top_logprobs.begin() + top_from, req.output_top_logprobs.end());
  }
  o.finished = req.finished();
  o.finish = req.finish;
  o.prompt_tokens = req.input_len;
  o.completion_tokens = req.output_len();
  o.cached_tokens = req.cached_tokens;
  o.retraction_count = req.retraction_count;
  req.sent_output_len = req.output_len();
}

void OutputStreamer::Flush(const OutputSink& sink) {
  if (used_ == 0) return;
  msg_.outputs.resize(used_);
  if (sink) sink(msg_);
  used_ = 0;
}

}  // namespace radixserve::sched
