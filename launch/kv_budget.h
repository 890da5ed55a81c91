// The KV pool's size for a launch: one number of KV slots, decided by the launcher and given to
// the scheduler (max_total_tokens) and every worker (kv_slots), so both always agree and RouDi's
// pools are sized for the same figure.
//
// Rules (README "Memory"):
//   kv_tokens:=N   N slots (at least 64); refused when the pool does not fit the memory left
//                  after the weights (MemAvailable - model file bytes).
//   kv_memory:=M   the slots whose K and V fit M MiB, the worker's page of padding included:
//                  floor(M MiB / bytes_per_token) - 256; refused below 64 slots.
//   both given     an error.
//   neither        0.5 (like SGLang's mem_fraction_static) of MemAvailable minus the model's
//                  file bytes, shared by the plan's scheduler groups, in slots; then at least one
//                  full served context and at most 16,384 (the former fixed pool); refused when even
//                  one context does not fit the memory left after the weights. With device:=cuda the
//                  KV lives in GPU memory, which the launcher does not measure: 16,384.
//   a launch file that sets the scheduler's max_total_tokens (or a worker's kv_slots) itself
//   keeps its number (both are set to it); the arguments are then refused.
// bytes_per_token = 2 x layers x the bytes of one K row of kv_heads x head_dim values in the
// workers' kv_type (model::KvBytesPerToken: F32 4 bytes a value, F16 2, Q8_0 34 and Q4_0 18 per
// 32), from the GGUF metadata as model::KvCache lays it out.
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/model/kv_cache.h"
#include "core/util/status.h"
#include "launch/launch_plan.h"

namespace radixserve::launch {

inline constexpr int64_t kMaxDefaultKvSlots = 16384;  // the former fixed pool: more only when asked
inline constexpr int64_t kMinKvSlots = 64;            // the scheduler's and worker's parameter minimum
inline constexpr int64_t kWorkerPadSlots = 256;       // WorkerShape::For adds a page of slots
inline constexpr double kDefaultKvMemoryFraction = 0.5;

struct KvGeometry {
  int64_t layers = 0, kv_dim = 0;  // kv_dim: kv_heads x head_dim, the values of one K (or V) row
  model::KvType type = model::KvType::kF32;
  int64_t bytes_per_token() const { return model::KvBytesPerToken(type, layers, kv_dim); }
};

// The model's KV layout from its GGUF metadata (as model::LlamaConfig reads it), held as `type`;
// refused when the model's head size cannot hold that type.
Result<KvGeometry> KvGeometryOfModel(const std::string& gguf_path, model::KvType type);

// /proc/meminfo's MemAvailable in bytes.
Result<uint64_t> MemAvailableBytes();

struct KvBudgetInputs {
  std::optional<int64_t> kv_memory_mib;  // kv_memory:=
  std::optional<int64_t> kv_tokens;      // kv_tokens:=
  std::optional<int64_t> file_slots;     // the launch file's own max_total_tokens / kv_slots
  KvGeometry geometry;
  uint64_t model_bytes = 0;     // the model file
  uint64_t mem_available = 0;   // MemAvailable
  int64_t context = 0;          // served context
  int64_t replicas = 1;         // scheduler groups, each with its own pool
  bool gpu = false;             // device:=cuda
};

struct KvBudget {
  int64_t slots = 0;
  int64_t bytes_per_token = 0;
  model::KvType kv_type = model::KvType::kF32;
  uint64_t kv_bytes = 0;        // one worker group's pool: (slots + pad) x bytes_per_token
  uint64_t model_bytes = 0;
  int64_t replicas = 1;
  std::string rule;             // how slots were chosen, with the arithmetic
};

Result<KvBudget> DecideKvBudget(const KvBudgetInputs& in);

// Everything the launcher does: reads the reserved arguments' values (already removed from the
// launch file's arguments), the model and the machine, decides, and writes max_total_tokens into
// every scheduler and kv_slots into every worker of the plan (parameters and argv).
Result<KvBudget> ApplyKvBudget(LaunchPlan* plan, std::optional<int64_t> kv_memory_mib,
                               std::optional<int64_t> kv_tokens);

// max_running_requests:=N, a launcher argument as llama.cpp's -np: the requests every scheduler
// runs at once and every worker's request rows (which, with the context, size RouDi's largest
// message). Refused when the launch file sets another number itself, and outside [1, 65536].
Status ApplyMaxRunningRequests(LaunchPlan* plan, int64_t n);

// One log line: model bytes, KV bytes per token, slots, KV MiB, and RouDi's pool MiB.
std::string DescribeKvBudget(const KvBudget& b, double roudi_pool_mib);

}  // namespace radixserve::launch
