// NewTokenRatio: the fraction of each running request's remaining
// max_new_tokens that admission assumes will really be generated
// (SCHEDULER_SPEC 3.2). Decays per decode step, resets when idle, jumps
// after a retraction. Plain value type.
#pragma once

#include <algorithm>

namespace radixserve::sched {

class NewTokenRatio {
 public:
  NewTokenRatio(double init_ratio, double conservativeness, double min_factor, int decay_steps)
      : init_(std::min(init_ratio * conservativeness, 1.0)),
        min_(std::min(init_ * min_factor, 1.0)),
        decay_((init_ - min_) / decay_steps),
        current_(init_) {}
  double value() const { return current_; }
  double init() const { return init_; }
  double min() const { return min_; }
  void DecayStep() { current_ = std::max(current_ - decay_, min_); }
  void Reset() { current_ = init_; }
  void Set(double v) { current_ = v; }

 private:
  double init_, min_, decay_, current_;
};

}  // namespace radixserve::sched
