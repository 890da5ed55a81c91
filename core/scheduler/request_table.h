// RequestTable: the one owner of request lifetime in the scheduler. It makes
// each request's Req (recycled objects keep their vectors' capacity), checks a
// new request against the vocabulary, the context and the KV pool and clips
// its max_new_tokens to what can fit (SCHEDULER_SPEC 4.3, 7.1), indexes
// requests by id, keeps finished ones until no plan refers to them (Reap), and
// then queues the release of the state the worker holds for them; the releases
// ride on the next batches. Per-cache-salt prompt statistics live here too.
// Scheduler thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/scheduler/req.h"
#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/tokenized_request.h"
#include "core/util/finish_reason.h"

namespace radixserve::sched {

// Prompt tokens of one cache salt: served from its cache namespace, and computed.
struct SaltStats {
  int64_t cached_prompt_tokens = 0;
  int64_t computed_prompt_tokens = 0;
};

class RequestTable {
 public:
  // `config` is the scheduler's (its max_total_tokens the pool's real size); it outlives the table.
  explicit RequestTable(const SchedulerConfig* config) : config_(config) {}

  // The Req of a request that just arrived. When it cannot run (a duplicate id, an empty prompt,
  // a token outside the vocabulary, no room for output) *refusal says why; the caller ends it
  // with Bury. `now` and `processed_prefill_tokens` are the scheduler's clocks at arrival.
  Req* Create(TokenizedRequest&& request, double now, int64_t processed_prefill_tokens, FinishReason* refusal);
  // A finished request: recycled by Reap once no plan refers to it.
  void Bury(Req* r) { graveyard_.push_back(r); }
  // nullptr when no request has that id (never seen, or recycled).
  Req* Find(uint64_t rid) const;
  // Recycles finished requests no plan refers to; the worker's states of them are to be released.
  void Reap();
  // Up to `cap` releases for the next batch (none of those requests is in it).
  void TakeReleases(size_t cap, std::vector<uint64_t>* out);
  bool releases_pending() const { return !pending_release_.empty(); }
  // The worker was replaced: it holds no state, so none is released and every request sends its
  // state record again.
  void ForgetWorkerStates();
  // Every finished request was recycled and its release sent.
  bool all_recycled() const { return graveyard_.empty() && pending_release_.empty(); }

  int64_t unfinished() const;
  // States the worker holds by this table's account (created, release not yet sent).
  int64_t worker_states() const;
  const std::unordered_map<uint64_t, Req*>& live() const { return reqs_; }

  // Per cache salt, for the first kMaxTrackedSalts salts seen; later ones add to kOtherSalts.
  static constexpr size_t kMaxTrackedSalts = 32;
  static constexpr const char* kOtherSalts = "";
  SaltStats& StatsOfSalt(const std::string& salt);
  const std::map<std::string, SaltStats, std::less<>>& salt_stats() const { return salt_stats_; }

 private:
  Req* NewReq();
  // Why a new request cannot run; clips max_new_tokens when it can.
  bool Validate(Req* r, FinishReason* refusal) const;

  const SchedulerConfig* config_;
  std::unordered_map<uint64_t, Req*> reqs_;
  std::vector<std::unique_ptr<Req>> storage_;
  std::vector<Req*> free_;
  std::vector<Req*> graveyard_;            // finished, maybe still in a plan out
  std::vector<uint64_t> pending_release_;  // recycled requests the worker still holds state for
  uint64_t arrival_seq_ = 0;
  std::map<std::string, SaltStats, std::less<>> salt_stats_;
};

}  // namespace radixserve::sched
