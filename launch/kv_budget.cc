#include "launch/kv_budget.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/builtin_model/builtin_model.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/llama_config.h"
#include "core/model/served_context.h"

namespace radixserve::launch {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string Mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", bytes / kMiB);
  return buf;
}

Result<std::optional<int64_t>> IntParamOf(const PlannedNode& n, const char* key) {
  std::string text = n.Param(key);
  if (text.empty()) return std::optional<int64_t>();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return Status::InvalidArgument(n.name + " parameter '" + key + "' = '" + text + "' is not an integer");
  return std::optional<int64_t>(v);
}

void SetParam(ProcessPlan& p, PlannedNode& n, const std::string& key, const std::string& value) {
  n.params.emplace_back(key, value);  // PlannedNode::Param reads the last one
  p.argv.push_back("-p");
  p.argv.push_back((p.kind == ProcessPlan::Kind::kContainer ? n.name + "." : std::string()) + key + ":=" + value);
}

}  // namespace

Result<KvGeometry> KvGeometryOfModel(const std::string& gguf_path, model::KvType type) {
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(gguf_path));
  RS_ASSIGN_OR_RETURN(model::LlamaConfig c, model::LlamaConfig::FromGguf(*file));
  if (Status fits = model::CheckKvTypeFits(type, c.head_dim); !fits.ok())
    return Status(fits.code(), gguf_path + ": " + fits.message());
  return KvGeometry{c.num_layers, c.kv_dim(), type};
}

Result<uint64_t> MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) return Status::IOError("cannot read /proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return Status::IOError("/proc/meminfo has no MemAvailable line");
}

Result<KvBudget> DecideKvBudget(const KvBudgetInputs& in) {
  KvBudget b;
  b.bytes_per_token = in.geometry.bytes_per_token();
  b.kv_type = in.geometry.type;
  b.model_bytes = in.model_bytes;
  b.replicas = std::max<int64_t>(in.replicas, 1);
  const uint64_t bpt = static_cast<uint64_t>(b.bytes_per_token);
  if (bpt == 0) return Status::InvalidArgument("the model's KV bytes per token are 0");
  const uint64_t after_weights = in.mem_available > in.model_bytes ? in.mem_available - in.model_bytes : 0;
  auto pool_bytes = [&](int64_t slots) { return static_cast<uint64_t>(slots + kWorkerPadSlots) * bpt; };
  auto fits = [&](int64_t slots) { return in.gpu || pool_bytes(slots) * static_cast<uint64_t>(b.replicas) <= after_weights; };
  const std::string machine = "MemAvailable " + Mib(double(in.mem_available)) + " MiB - model " +
                              Mib(double(in.model_bytes)) + " MiB = " + Mib(double(after_weights)) + " MiB";

  if (in.kv_memory_mib && in.kv_tokens)
    return Status::InvalidArgument("kv_memory:=" + std::to_string(*in.kv_memory_mib) + " and kv_tokens:=" +
                                   std::to_string(*in.kv_tokens) +
                                   " both size the KV pool: give at most one of them");
  if (in.file_slots && (in.kv_memory_mib || in.kv_tokens))
    return Status::InvalidArgument("the launch file sets the KV pool itself (max_total_tokens / kv_slots = " +
                                   std::to_string(*in.file_slots) + "): drop kv_memory:= / kv_tokens:= or that parameter");
  if (in.kv_tokens || in.file_slots) {
    b.slots = in.kv_tokens ? *in.kv_tokens : *in.file_slots;
    const std::string what = in.kv_tokens ? "kv_tokens:=" + std::to_string(b.slots)
                                          : "the launch file's max_total_tokens " + std::to_string(b.slots);
    if (b.slots < kMinKvSlots)
      return Status::InvalidArgument(what + " is below the minimum of " + std::to_string(kMinKvSlots) + " KV slots");
    if (!fits(b.slots))
      return Status::ResourceExhausted(what + " needs " + Mib(double(pool_bytes(b.slots) * b.replicas)) +
                                       " MiB of KV, more than the memory left after the weights (" + machine +
                                       "); lower it");
    b.rule = what;
  } else if (in.kv_memory_mib) {
    if (*in.kv_memory_mib <= 0)
      return Status::InvalidArgument("kv_memory:=" + std::to_string(*in.kv_memory_mib) + " must be a positive MiB count");
    const uint64_t bytes = static_cast<uint64_t>(*in.kv_memory_mib) << 20;
    b.slots = static_cast<int64_t>(bytes / bpt) - kWorkerPadSlots;
    if (b.slots < kMinKvSlots)
      return Status::InvalidArgument("kv_memory:=" + std::to_string(*in.kv_memory_mib) + " MiB holds " +
                                     std::to_string(bytes / bpt) + " tokens of " + std::to_string(bpt) +
                                     " B; the pool needs at least " + std::to_string(kMinKvSlots + kWorkerPadSlots) +
                                     " (" + std::to_string(kMinKvSlots) + " slots + " + std::to_string(kWorkerPadSlots) +
                                     " of padding): raise it");
    if (!fits(b.slots))
      return Status::ResourceExhausted("kv_memory:=" + std::to_string(*in.kv_memory_mib) +
                                       " MiB is more than the memory left after the weights (" + machine + "); lower it");
    b.rule = "kv_memory:=" + std::to_string(*in.kv_memory_mib) + " MiB / " + std::to_string(bpt) + " B - " +
             std::to_string(kWorkerPadSlots) + " padding";
  } else if (in.gpu) {
    b.slots = std::max(kMaxDefaultKvSlots, in.context);
    b.rule = "device:=cuda default (GPU memory is not measured): " + std::to_string(b.slots);
  } else {
    const double budget = kDefaultKvMemoryFraction * double(after_weights) / double(b.replicas);
    const int64_t by_memory = static_cast<int64_t>(budget / double(bpt)) - kWorkerPadSlots;
    const int64_t floor_slots = std::max(in.context, kMinKvSlots);
    b.slots = std::clamp(by_memory, floor_slots, std::max(kMaxDefaultKvSlots, floor_slots));
    if (!fits(b.slots))
      return Status::ResourceExhausted(
          "one full context (" + std::to_string(in.context) + " tokens) of KV needs " +
          Mib(double(pool_bytes(b.slots) * b.replicas)) + " MiB, more than the memory left after the weights (" +
          machine + "); lower context:= or give kv_tokens:= / kv_memory:=");
    b.rule = "default: " + std::to_string(kDefaultKvMemoryFraction) .substr(0, 3) + " x (" + machine + ")" +
             (b.replicas > 1 ? " / " + std::to_string(b.replicas) + " groups" : std::string()) + " = " +
             Mib(budget) + " MiB = " + std::to_string(std::max<int64_t>(by_memory, 0)) + " slots, kept within [" +
             std::to_string(floor_slots) + " (one context), " + std::to_string(std::max(kMaxDefaultKvSlots, floor_slots)) +
             "]";
  }
  b.kv_bytes = pool_bytes(b.slots);
  return b;
}

Result<KvBudget> ApplyKvBudget(LaunchPlan* plan, std::optional<int64_t> kv_memory_mib,
                               std::optional<int64_t> kv_tokens) {
  KvBudgetInputs in;
  in.kv_memory_mib = kv_memory_mib;
  in.kv_tokens = kv_tokens;
  std::string model, device = "cpu", kv_type = "auto";
  int64_t context = 0;
  int64_t schedulers = 0;
  for (auto& p : plan->processes)
    for (auto& n : p.nodes) {
      if (n.component != "scheduler" && n.component != "worker") continue;
      const char* key = n.component == "scheduler" ? "max_total_tokens" : "kv_slots";
      RS_ASSIGN_OR_RETURN(std::optional<int64_t> own, IntParamOf(n, key));
      if (own) {
        if (in.file_slots && *in.file_slots != *own)
          return Status::InvalidArgument("the launch file gives the KV pool two sizes (" + std::to_string(*in.file_slots) +
                                         " and " + n.name + "'s " + key + " " + std::to_string(*own) +
                                         "): the scheduler's max_total_tokens and the worker's kv_slots must agree");
        in.file_slots = own;
      }
      if (n.component == "scheduler") {
        ++schedulers;
        if (model.empty()) model = n.Param("model");
        RS_ASSIGN_OR_RETURN(std::optional<int64_t> c, IntParamOf(n, "context"));
        if (c) context = *c;
      } else {
        if (n.Param("device") == "cuda") device = "cuda";
        if (!n.Param("kv_type").empty()) kv_type = n.Param("kv_type");
        if (model.empty()) model = n.Param("model");
      }
    }
  if (model.empty()) {
    RS_ASSIGN_OR_RETURN(model, builtin_model::EnsureDefaultModel());
  }
  in.gpu = device == "cuda";
  in.replicas = std::max<int64_t>(schedulers, 1);
  Result<model::KvType> type = model::ParseKvType(kv_type, in.gpu);
  if (!type.ok()) return Status(type.status().code(), "kv_type: " + type.status().message());
  RS_ASSIGN_OR_RETURN(in.geometry, KvGeometryOfModel(model, *type));
  std::error_code ec;
  in.model_bytes = std::filesystem::file_size(model, ec);
  if (ec) return Status::IOError(model + ": " + ec.message());
  {
    RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(model));
    RS_ASSIGN_OR_RETURN(int32_t served, model::ServedContext(*file, context));
    in.context = served;
  }
  RS_ASSIGN_OR_RETURN(in.mem_available, MemAvailableBytes());
  RS_ASSIGN_OR_RETURN(KvBudget b, DecideKvBudget(in));
  const std::string slots = std::to_string(b.slots);
  for (auto& p : plan->processes)
    for (auto& n : p.nodes) {
      if (n.component == "scheduler") SetParam(p, n, "max_total_tokens", slots);
      if (n.component == "worker") SetParam(p, n, "kv_slots", slots);
    }
  return b;
}

Status ApplyMaxRunningRequests(LaunchPlan* plan, int64_t n) {
  if (n < 1 || n > 65536)
    return Status::InvalidArgument("max_running_requests:=" + std::to_string(n) + " is outside [1, 65536]");
  for (auto& p : plan->processes)
    for (auto& node : p.nodes) {
      if (node.component != "scheduler" && node.component != "worker") continue;
      RS_ASSIGN_OR_RETURN(std::optional<int64_t> own, IntParamOf(node, "max_running_requests"));
      if (own && *own != n)
        return Status::InvalidArgument("max_running_requests:=" + std::to_string(n) + " and the launch file's " +
                                       node.name + ".max_running_requests " + std::to_string(*own) +
                                       " disagree: drop one of them");
      SetParam(p, node, "max_running_requests", std::to_string(n));
    }
  return Status::Ok();
}

std::string DescribeKvBudget(const KvBudget& b, double roudi_pool_mib) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.1f", roudi_pool_mib);
  return "KV pool: model " + Mib(double(b.model_bytes)) + " MiB, KV " + std::to_string(b.bytes_per_token) +
         " B per token (" + model::KvTypeName(b.kv_type) + "), " + std::to_string(b.slots) + " slots (" + b.rule + "), KV " + Mib(double(b.kv_bytes)) +
         " MiB per worker group (" + std::to_string(b.slots) + " + " + std::to_string(kWorkerPadSlots) + " x " +
         std::to_string(b.bytes_per_token) + " B)" +
         (b.replicas > 1 ? " x " + std::to_string(b.replicas) + " groups" : std::string()) + ", RouDi pools " + buf +
         " MiB";
}

}  // namespace radixserve::launch
