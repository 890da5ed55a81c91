#include "nodes/scheduler/scheduler_service.h"

#include <algorithm>
#include <cstdio>

#include <glog/logging.h>

#include <nlohmann/json.hpp>

namespace radixserve::nodes {

control::ControlReply ControlFailure(const Status& s) {
  control::ControlReply reply;
  reply.set_success(false);
  reply.set_code(static_cast<int32_t>(s.code()));
  reply.set_message(s.message());
  return reply;
}

Result<std::unique_ptr<SchedulerService>> SchedulerService::Create(Options options, sched::Worker* worker,
                                                                   sched::DetokenizeFn detokenize, Sinks sinks) {
  std::unique_ptr<SchedulerService> s(new SchedulerService());
  s->sinks_ = std::move(sinks);
  s->host_ = std::make_unique<sched::PluginHost>(options.plugin_dirs.empty() ? sched::PluginHost::DefaultDirs()
                                                                             : options.plugin_dirs);
  RS_ASSIGN_OR_RETURN(sched::CachePtr cache, s->host_->CreateCache(options.cache, options.cache_params));
  RS_ASSIGN_OR_RETURN(sched::PolicyPtr policy, s->host_->CreatePolicy(options.policy, options.policy_params));
  s->cache_name_ = options.cache;
  s->cache_params_ = options.cache_params;
  options.config.pipeline_depth = std::max(1, worker->pipeline_depth());
  s->scheduler_ = std::make_unique<sched::Scheduler>(options.config, std::move(cache), std::move(policy),
                                                     s->sinks_.outputs, std::move(detokenize));
  s->driver_ = std::make_unique<sched::StepDriver>(s->scheduler_.get(), worker);
  return s;
}

SchedulerService::~SchedulerService() { Stop(); }

void SchedulerService::HandleControl(const control::ControlRequest& req) {
  std::optional<control::ControlReply> reply = Execute(req);
  if (reply && sinks_.reply) sinks_.reply(req.call_id(), std::move(*reply));
}

void SchedulerService::Stop() {
  for (uint64_t call_id : swaps_in_flight_)
    if (sinks_.reply) sinks_.reply(call_id, ControlFailure(Status::Unavailable("cache swap did not complete before shutdown")));
  swaps_in_flight_.clear();
}

void SchedulerService::WorkerLost() {
  ++worker_losses_;
  LOG(ERROR) << "the worker is gone; its KV cache is lost: flushing the prefix cache, running requests "
             << "recompute on the next worker (those of the interrupted step end with an error)";
  auto cache = host_->CreateCache(cache_name_, cache_params_);
  if (!cache.ok()) {
    LOG(ERROR) << "cannot recreate the cache: " << cache.status().ToString();
    return;
  }
  scheduler_->WorkerLost(std::move(*cache), [](const Status& s, const std::string& r) {
    if (s.ok()) LOG(INFO) << "after the worker loss: " << r;
  });
}

std::optional<control::ControlReply> SchedulerService::Execute(const control::ControlRequest& req) {
  control::ControlReply reply;
  auto fail = [](const Status& s) { return ControlFailure(s); };
  // A plugin or parameter the request names that cannot be used is the caller's mistake, whatever
  // the loader's reason (missing, wrong ABI, refused configuration): 400, not a server state.
  auto refuse = [](const Status& s) { return ControlFailure(Status::InvalidArgument(s.message())); };
  switch (req.body_case()) {
    case control::ControlRequest::kSwapPolicy: {
      std::map<std::string, std::string> p(req.swap_policy().params().begin(), req.swap_policy().params().end());
      auto policy = host_->CreatePolicy(req.swap_policy().name(), p);
      if (!policy.ok()) return refuse(policy.status());
      // The reply goes out once the new policy is in effect, so a read after it sees the new one.
      const std::string what = "policy " + std::string(scheduler_->policy().name()) + " -> " + req.swap_policy().name();
      const uint64_t call_id = req.call_id();
      scheduler_->SwapPolicy(std::move(*policy), [this, call_id, what](const Status& s, const std::string& note) {
        control::ControlReply done;
        done.set_success(s.ok());
        done.set_message(note.empty() ? what : what + " (" + note + ")");
        sinks_.reply(call_id, std::move(done));
      });
      return std::nullopt;
    }
    case control::ControlRequest::kSwapCache:
    case control::ControlRequest::kFlushCache: {
      bool flush = req.body_case() == control::ControlRequest::kFlushCache;
      // A flush drops only what no request needs: refused while any request is unfinished; requests
      // that finished but whose last step is still in flight are drained first.
      if (flush && scheduler_->num_unfinished() > 0)
        return fail(Status::FailedPrecondition(
            "cannot flush the cache while requests run: " + std::to_string(scheduler_->num_unfinished()) +
            " unfinished (" + std::to_string(scheduler_->num_running()) + " running, " +
            std::to_string(scheduler_->num_waiting()) + " waiting)"));
      std::string cname = flush ? std::string(scheduler_->cache().name()) : req.swap_cache().name();
      std::map<std::string, std::string> p = cache_params_;
      if (!flush) p = std::map<std::string, std::string>(req.swap_cache().params().begin(), req.swap_cache().params().end());
      auto cache = host_->CreateCache(cname, p);
      if (!cache.ok()) return refuse(cache.status());
      if (!flush) {
        cache_name_ = cname;
        cache_params_ = p;
      }
      if (!flush && !req.swap_cache().mode().empty() && req.swap_cache().mode() != "drain" &&
          req.swap_cache().mode() != "flush")
        return fail(Status::InvalidArgument("cache swap mode must be drain or flush, got '" + req.swap_cache().mode() + "'"));
      const bool flush_mode = !flush && req.swap_cache().mode() == "flush";
      // A fresh cache replaces the old one (when idle that is exactly a flush) at an iteration
      // boundary of the one loop, after a drain if asked; the reply goes out when it completes.
      const uint64_t call_id = req.call_id();
      swaps_in_flight_.insert(call_id);
      scheduler_->SwapCache(std::move(*cache), flush_mode ? sched::CacheSwapMode::kFlush : sched::CacheSwapMode::kDrain,
                            [this, call_id, flush](const Status& s, const std::string& report) {
                              swaps_in_flight_.erase(call_id);
                              if (!s.ok()) return sinks_.reply(call_id, ControlFailure(s));
                              control::ControlReply done;
                              done.set_success(true);
                              done.set_message(flush ? "cache flushed" : report);
                              sinks_.reply(call_id, std::move(done));
                            });
      return std::nullopt;
    }
    case control::ControlRequest::kGetStats:
      reply.set_success(true);
      reply.set_json(StatsJson());
      return reply;
    case control::ControlRequest::kGetServerInfo:
      reply.set_success(true);
      reply.set_json(ServerInfoJson());
      return reply;
    case control::ControlRequest::kListPlugins: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& info : host_->List())
        list.push_back({{"name", info.name},
                        {"kind", sched::PluginKindName(info.kind)},
                        {"path", info.path},
                        {"description", info.description}});
      reply.set_success(true);
      reply.set_json(list.dump());
      return reply;
    }
    case control::ControlRequest::kLoadPlugin: {
      auto info = host_->Inspect(req.load_plugin());
      if (!info.ok()) return refuse(info.status());
      reply.set_success(true);
      reply.set_message("plugin " + info->name + " is loadable from " + info->path);
      return reply;
    }
    case control::ControlRequest::kSetParameter: {
      Status s = sinks_.set_parameter ? sinks_.set_parameter(req.set_parameter().name(), req.set_parameter().value())
                                     : Status::Unsupported("this scheduler has no settable parameters");
      if (!s.ok()) return refuse(s);
      reply.set_success(true);
      return reply;
    }
    case control::ControlRequest::BODY_NOT_SET:
      break;
  }
  return fail(Status::InvalidArgument("empty control request"));
}

std::string SaltLabel(std::string_view salt) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: stable across runs and machines
  for (unsigned char c : salt) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 12);
}

std::string SchedulerService::StatsJson() const {
  const auto& st = scheduler_->stats();
  const auto& alloc = scheduler_->allocator();
  double total = double(alloc.size());
  double prompt = double(st.cached_prompt_tokens + st.computed_prompt_tokens);
  nlohmann::json j = {
      {"num_running_reqs", scheduler_->num_running()},
      {"num_queue_reqs", scheduler_->num_waiting()},
      {"token_usage", total > 0 ? (total - double(alloc.available_size())) / total : 0.0},
      {"cache_hit_rate", prompt > 0 ? double(st.cached_prompt_tokens) / prompt : 0.0},
      {"cached_prompt_tokens", st.cached_prompt_tokens},
      {"computed_prompt_tokens", st.computed_prompt_tokens},
      {"retractions", st.retractions},
      {"preemptions", st.preemptions},
      {"finished", st.finished},
      {"aborted", st.aborted},
      {"policy_faults", st.policy_faults},
      {"waiting_timeouts", st.waiting_timeouts},
      {"running_timeouts", st.running_timeouts},
      {"iterations", st.iterations},
      {"prefill_batches", st.prefill_batches},
      {"decode_batches", st.decode_batches},
      {"kv_total", alloc.size()},
      {"kv_available", alloc.available_size()},
      {"kv_evictable", scheduler_->cache().evictable_size()},
      {"kv_protected", scheduler_->cache().protected_size()},
      {"req_slots_total", scheduler_->req_pool().size()},
      {"req_slots_available", scheduler_->req_pool().available_size()},
      {"new_token_ratio", scheduler_->new_token_ratio()},
      {"worker_losses", worker_losses_},
      {"cache_swaps_in_flight", swaps_in_flight_.size()},
      {"worker_known_requests", scheduler_->worker_states()},
      {"failed_batches", st.failed_batches},
      {"max_inflight_batches", st.max_inflight},
  };
  // Per cache salt: salts are tenants' secrets, so they appear as a hash (SaltLabel), never as is.
  nlohmann::json salts = nlohmann::json::object();
  for (const auto& [salt, s] : scheduler_->salt_stats()) {
    const double p = double(s.cached_prompt_tokens + s.computed_prompt_tokens);
    salts[salt.empty() ? std::string("other") : SaltLabel(salt)] = {
        {"cached_prompt_tokens", s.cached_prompt_tokens},
        {"computed_prompt_tokens", s.computed_prompt_tokens},
        {"cache_hit_rate", p > 0 ? double(s.cached_prompt_tokens) / p : 0.0},
        {"cached_tokens", salt.empty() ? int64_t(-1) : scheduler_->cache().namespace_size(salt)}};
  }
  j["salts"] = std::move(salts);
  j["chunk_caps"] = st.chunk_caps;
  j["fair_skips"] = st.fair_skips;
  j["fair_prefill_chunk"] = scheduler_->config().fair_prefill_chunk;
  if (sinks_.add_stats) sinks_.add_stats(&j);
  return j.dump();
}

std::string SchedulerService::ServerInfoJson() const {
  nlohmann::json j;
  j["scheduler"] = {{"policy", std::string(scheduler_->policy().name())},
                    {"policy_stats", nlohmann::json::parse(scheduler_->policy().StatsJson(), nullptr, false)},
                    {"cache", std::string(scheduler_->cache().name())},
                    {"stats", nlohmann::json::parse(StatsJson())}};
  if (sinks_.add_server_info) sinks_.add_server_info(&j);
  return j.dump();
}

}  // namespace radixserve::nodes
