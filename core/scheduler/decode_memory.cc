#include "core/scheduler/decode_memory.h"

#include <algorithm>

namespace radixserve::sched {

int64_t DecodeMemory::DecodeNeed(std::span<Req* const> reqs) const {
  const int32_t P = alloc_->page_size();
  if (P == 1) return static_cast<int64_t>(reqs.size());
  int64_t pages = 0;
  for (const Req* r : reqs) pages += (r->kv_len % P == 0) ? 1 : 0;  // about to start a new page
  return pages * P;
}

bool DecodeMemory::Check(std::span<Req* const> reqs, PrefixCache* cache) {
  const int64_t need = DecodeNeed(reqs);
  if (alloc_->available_size() < need) cache->Evict(need);
  return alloc_->available_size() >= need;
}

void DecodeMemory::VictimOrder(std::span<Req* const> reqs, std::vector<int32_t>* order) {
  order->resize(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) (*order)[i] = static_cast<int32_t>(i);
  // Descending by (output_len, -input_len): popping from the back takes the fewest outputs,
  // and among equals the longest prompt.
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    const Req& x = *reqs[a];
    const Req& y = *reqs[b];
    if (x.output_len() != y.output_len()) return x.output_len() > y.output_len();
    return x.input_len < y.input_len;
  });
}

double DecodeMemory::Retract(std::vector<Req*>* reqs, PrefixCache* cache, const std::function<void(Req*)>& release,
                             std::vector<Req*>* retracted) {
  VictimOrder(*reqs, &order_);
  auto selected = [&] {
    kept_.clear();
    for (int32_t i : order_) kept_.push_back((*reqs)[i]);
    return std::span<Req* const>(kept_);
  };
  bool first = true;
  while (first || !Check(selected(), cache)) {
    if (order_.size() == 1) break;  // never retract the last one
    first = false;
    Req* victim = (*reqs)[order_.back()];
    order_.pop_back();
    retracted->push_back(victim);
    release(victim);
    // Make room for the survivors' next few steps right away.
    const int64_t want = static_cast<int64_t>(order_.size()) * steps_;
    if (alloc_->available_size() < want) cache->Evict(want - alloc_->available_size());
  }
  // Keep survivors in their original batch order.
  std::vector<uint8_t> keep(reqs->size(), 0);
  for (int32_t i : order_) keep[i] = 1;
  size_t w = 0;
  int64_t out_sum = 0, max_sum = 0;
  for (size_t i = 0; i < reqs->size(); ++i)
    if (keep[i]) {
      Req* r = (*reqs)[i];
      out_sum += r->output_len();
      max_sum += r->max_new_tokens();
      (*reqs)[w++] = r;
    }
  reqs->resize(w);
  if (max_sum == 0) return 1.0;
  return std::min(1.0, static_cast<double>(out_sum + static_cast<int64_t>(steps_) * static_cast<int64_t>(w)) /
                           static_cast<double>(max_sum));
}

}  // namespace radixserve::sched
