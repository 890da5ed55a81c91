// FinishChecker: Req.check_finished of SCHEDULER_SPEC 7.2, run after every
// appended token: abort, max_new_tokens, EOS / stop token ids (unless
// ignore_eos), invalid token id, stop strings on the decoded tail.
// min_new_tokens is a sampling-side mask, not checked here. Stop strings need
// text: the detokenize function is injected. Thread-compatible (const).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/scheduler/req.h"

namespace radixserve::sched {

using DetokenizeFn = std::function<std::string(std::span<const int32_t>)>;

class FinishChecker {
 public:
  FinishChecker(std::vector<int32_t> eos_token_ids, int32_t vocab_size, DetokenizeFn detokenize)
      : eos_(std::move(eos_token_ids)), vocab_size_(vocab_size), detokenize_(std::move(detokenize)) {}

  // Sets req.finish when the request should stop after its last token.
  void Check(Req& req) const;
  // Whether the decoded tail ends with a proper prefix of a stop string (stream hold-back).
  bool TailMayStartStopString(const Req& req) const;

 private:
  std::vector<int32_t> eos_;
  int32_t vocab_size_;
  DetokenizeFn detokenize_;
};

}  // namespace radixserve::sched
