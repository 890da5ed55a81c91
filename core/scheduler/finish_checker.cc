#include "core/scheduler/finish_checker.h"

#include <algorithm>

namespace radixserve::sched {

void FinishChecker::Check(Req& req) const {
  if (req.finished()) return;
  if (req.to_abort) {
    req.finish = FinishReason::Abort(req.abort_message.empty() ? "aborted" : req.abort_message, req.abort_status);
    return;
  }
  const int32_t out_len = req.output_len();
  if (out_len >= req.max_new_tokens()) {
    req.finish = FinishReason::Length(out_len);
    return;
  }
  if (out_len == 0) return;
  const int32_t last = req.tokens.back();
  if (!req.spec.sampling.ignore_eos) {
    const std::vector<int32_t>& stop_ids = req.spec.stop_token_ids;
    bool stop = std::find(stop_ids.begin(), stop_ids.end(), last) != stop_ids.end() ||
                std::find(eos_.begin(), eos_.end(), last) != eos_.end();
    if (stop) {
      req.finish = FinishReason::Token(last);
      return;
    }
  }
  if (last < 0 || last >= vocab_size_) {
    req.finish = FinishReason::Str("NaN happened");
    return;
  }
  if (!req.spec.stop_strs.empty() && detokenize_) {
    const int32_t n = std::min(out_len, req.stop_str_max_len + 1);
    std::string tail = detokenize_(req.output_ids().last(n));
    for (const auto& s : req.spec.stop_strs)
      if (!s.empty() && tail.find(s) != std::string::npos) {
        req.finish = FinishReason::Str(s);
        return;
      }
  }
}

bool FinishChecker::TailMayStartStopString(const Req& req) const {
  if (req.spec.stop_strs.empty() || !detokenize_ || req.output_len() == 0) return false;
  const int32_t n = std::min(req.output_len(), req.stop_str_max_len + 1);
  std::string tail = detokenize_(req.output_ids().last(n));
  for (const auto& s : req.spec.stop_strs) {
    if (s.size() < 2) continue;
    for (size_t k = std::min(s.size() - 1, tail.size()); k >= 1; --k)
      if (tail.compare(tail.size() - k, k, s, 0, k) == 0) return true;
  }
  return false;
}

}  // namespace radixserve::sched
