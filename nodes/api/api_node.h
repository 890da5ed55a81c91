// ApiNode: the pipeline's front door. It serves the OpenAI-compatible HTTP
// API (core/api HttpServer) and implements its ApiBackend over the
// transport: tokenization in-process, TokenizedRequest/Abort to the
// scheduler, BatchStrOut from the detokenizer back to each request's sink,
// control calls through a fan-out communicator, node readiness from the
// node_status topic, and Prometheus metrics. With data parallelism
// (dp_groups: the namespaces of several scheduler groups) it routes each
// request to one group (core/router Router, fed by the groups' cache events)
// and fans control calls out to every group.
//
// Its rooms, one concern each: this file (configuration, sending requests and
// aborts, the receive loop), api_control.cc (control calls, admin, server info,
// metrics), RequestStreams (requests in flight and their sinks), NodeHealth
// (what node_status says), metrics.h (the figures and the scheduler stats
// cache), the Router (which group serves a request).
//
// Thread-safety: the ApiBackend methods run on many HTTP threads at once; one
// receive thread delivers outputs. pub_mu_ guards the publishers (iceoryx
// publishers are single-threaded); RequestStreams, NodeHealth, StatsCache and
// the Router guard their own state; the rest is set in OnConfigure and only
// read while active.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/api/backend.h"
#include "core/api/http_server.h"
#include "core/gguf/gguf_reader.h"
#include "core/router/router.h"
#include "core/scheduler/plugin_host.h"
#include "core/tokenizer/tokenizer.h"
#include "nodes/api/metrics.h"
#include "nodes/api/node_health.h"
#include "nodes/api/request_streams.h"
#include "nodes/node.h"
#include "nodes/node_loop.h"
#include "transport/channel.h"
#include "transport/fan_out_communicator.h"

namespace radixserve::nodes {

class ApiNode : public Node, public api::ApiBackend {
 public:
  explicit ApiNode(NodeContext ctx);
  ~ApiNode() override;
  const char* component() const override { return "api"; }
  bool Ready() const override;

  // ApiBackend.
  bool Ready() override { return static_cast<const ApiNode*>(this)->Ready(); }
  int32_t ContextLength() override { return context_length_; }
  int32_t VocabSize() override { return tokenizer_ ? tokenizer_->vocab_size() : 0; }
  Result<std::vector<int32_t>> Tokenize(std::string_view text, bool add_special_tokens) override;
  Result<std::string> Detokenize(std::span<const int32_t> ids, bool skip_special_tokens) override;
  Status Submit(const api::GenerateRequest& request, std::shared_ptr<api::ResponseSink> sink) override;
  void Abort(const std::string& rid) override;
  Result<std::string> ServerInfoJson() override;
  Result<std::string> MetricsText() override;
  Status FlushCache() override;
  Result<std::string> Admin(const api::AdminCall& call) override;

  // A control call to the scheduler(s), merged. Used by the control endpoints and `radixserve ctl`.
  Result<control::ControlReply> Control(control::ControlRequest req);
  int port() const { return server_ ? server_->port() : 0; }

 protected:
  Status OnConfigure() override;
  Status OnActivate() override;
  Status OnDeactivate() override;
  Status OnCleanup() override;
  Status OnParameterChanged(const std::string& name) override;

 private:
  // One scheduler group's topics (the only one without data parallelism).
  struct Group {
    std::string ns;
    std::unique_ptr<transport::Publisher> requests, control;
    std::unique_ptr<transport::Subscriber> str_out, control_reply, node_status, cache_events;
  };

  void ReceiveLoop();
  Status ConfigureGroup(const std::string& ns, const transport::ChannelOptions& opts);
  void HandleStrOut(const Group& group, const void* data, size_t size);
  void HandleControlReply(const void* data, size_t size);
  void HandleNodeStatus(int32_t group, const void* data, size_t size);
  void HandleCacheEvents(int32_t group, const void* data, size_t size);
  Status PublishAbort(int32_t group, uint64_t rid);
  // Replies of a fan-out read, one JSON object per group: {"groups": {ns: ...}, "router": ...}.
  std::string GroupsJson(const std::vector<control::ControlReply>& replies) const;
  // The routing policy the parameters name (routing_policy, routing_params), from its plugin.
  Result<router::RoutingPolicyPtr> LoadRoutingPolicy();
  // Requests in flight are lost when the scheduler or detokenizer restarts or falls silent: they end
  // with an error instead of hanging.
  void CheckPipelineNodes();
  Result<std::string> ControlJson(control::ControlRequest req);  // success → {"message", "result"}

  std::shared_ptr<const gguf::GgufFile> file_;
  std::unique_ptr<Tokenizer> tokenizer_;
  int32_t context_length_ = 0;
  std::unique_ptr<api::HttpServer> server_;

  std::mutex pub_mu_;  // iceoryx publishers are single-threaded; HTTP threads share them
  std::vector<Group> groups_;
  bool data_parallel_ = false;  // dp_groups given: several groups, nodes named ns/name
  std::unique_ptr<sched::PluginHost> plugins_;  // routing policy plugins
  std::unique_ptr<router::Router> router_;
  std::unique_ptr<transport::Waiter> waiter_;
  // Two lanes over the same topics: reads (stats, server info, plugin lists) never queue behind a
  // change (a cache swap may take as long as its drain).
  std::unique_ptr<transport::FanOutCommunicator> change_comm_, read_comm_;
  NodeLoop receiver_;  // delivers outputs, control replies and node status
  std::atomic<bool> draining_{false};  // shutting down: new requests are refused, running ones finish

  ApiMetrics metrics_;
  RequestStreams streams_{&metrics_};
  NodeHealth health_;
  StatsCache scheduler_stats_;
  uint64_t dropped_messages_ = 0;  // receive thread only
};

}  // namespace radixserve::nodes
