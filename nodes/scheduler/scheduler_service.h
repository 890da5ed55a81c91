// SchedulerService: what the scheduler node does, without its transport. It
// owns the Scheduler, the StepDriver that runs it, its plugin host and the active plugins; the node hands
// it decoded requests, aborts and control calls and steps it, and it answers
// through the sinks it was given: output batches, and control replies (a
// cache swap's when the swap completes, at an iteration boundary of the one
// loop). Tests drive it directly with a fake worker, without RouDi.
// Not thread-safe: one thread (the node's loop) calls everything.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/scheduler/plugin_host.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "transport/control.pb.h"

namespace radixserve::nodes {

class SchedulerService {
 public:
  struct Options {
    sched::SchedulerConfig config;
    std::vector<std::string> plugin_dirs;  // empty: PluginHost::DefaultDirs()
    std::string policy = "lpm";
    std::string cache = "radix";
    std::map<std::string, std::string> policy_params, cache_params;
  };
  // Where the service's answers go; all are called on the service's thread.
  struct Sinks {
    sched::OutputSink outputs;
    std::function<void(uint64_t call_id, control::ControlReply reply)> reply;
    // The node's own parameters (set_parameter) and what it adds to stats and server info.
    std::function<Status(const std::string& name, const std::string& value)> set_parameter;
    std::function<void(nlohmann::json* stats)> add_stats;
    std::function<void(nlohmann::json* info)> add_server_info;
  };

  static Result<std::unique_ptr<SchedulerService>> Create(Options options, sched::Worker* worker,
                                                          sched::DetokenizeFn detokenize, Sinks sinks);
  ~SchedulerService();

  void Submit(sched::TokenizedRequest request) { scheduler_->Submit(std::move(request)); }
  void Abort(uint64_t rid) { scheduler_->Abort(rid); }
  // Answers through sinks.reply, now or (a cache swap) when it completes.
  void HandleControl(const control::ControlRequest& request);
  Status Step(bool* did_work) { return driver_->Step(did_work); }
  // The worker died or was replaced: its KV and request states are gone.
  void WorkerLost();
  void SetFairPrefillChunk(int32_t tokens) { scheduler_->set_fair_prefill_chunk(tokens); }
  // Where the prefix cache reports stores and evictions (a data-parallel router's view).
  void set_cache_events(sched::CacheEventSink* sink) { scheduler_->set_cache_events(sink); }
  // Answers the cache swaps still in flight (the loop is ending).
  void Stop();

  const sched::Scheduler& scheduler() const { return *scheduler_; }
  std::string StatsJson() const;
  std::string ServerInfoJson() const;
  size_t swaps_in_flight() const { return swaps_in_flight_.size(); }

 private:
  SchedulerService() = default;
  // The reply, or nullopt for a cache swap, which replies when it completes.
  std::optional<control::ControlReply> Execute(const control::ControlRequest& request);

  Sinks sinks_;
  std::unique_ptr<sched::PluginHost> host_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<sched::StepDriver> driver_;  // declared after scheduler_: goes first
  std::string cache_name_;  // the active cache plugin and its parameters (a worker loss recreates it)
  std::map<std::string, std::string> cache_params_;
  std::set<uint64_t> swaps_in_flight_;  // control calls of cache swaps not yet complete
  uint64_t worker_losses_ = 0;
};

// How a cache salt is named in stats and metrics: 12 hex digits of its FNV-1a hash (a salt is a
// tenant's secret; its label must not give it away).
std::string SaltLabel(std::string_view salt);

// A failed control reply carrying the status's code and message.
control::ControlReply ControlFailure(const Status& s);

}  // namespace radixserve::nodes
