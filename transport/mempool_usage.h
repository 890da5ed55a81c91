// Shared-memory pool usage as RouDi reports it on its mempool introspection topic: for each
// segment (RouDi's own one first, then one per writer/reader group) and each pool in it, the
// chunk payload size, how many chunks it has, how many are in use, and the fewest ever free.
//
// ReadMemPoolUsage registers the calling process with RouDi, so it belongs in a short-lived tool
// (`radixserve shm`): iceoryx signals every registered process when RouDi stops, and a process
// registers once. The conversion and formatting functions are pure. Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "iceoryx_posh/roudi/introspection_types.hpp"

namespace radixserve::transport {

struct PoolUsage {
  uint32_t chunk_payload_size = 0;  // the payload one chunk holds (the size in RouDi's config)
  uint32_t chunk_size = 0;          // payload plus iceoryx's chunk header
  uint32_t chunks = 0;              // chunks in the pool
  uint32_t used = 0;                // chunks in use now (loaned, queued, or kept as history)
  uint32_t min_free = 0;            // the fewest free chunks since RouDi started

  bool operator==(const PoolUsage&) const = default;
};

struct SegmentUsage {
  uint32_t id = 0;  // 0: RouDi's own segment (introspection, service discovery)
  std::string writer_group;
  std::string reader_group;
  std::vector<PoolUsage> pools;

  bool operator==(const SegmentUsage&) const = default;
};

struct MemPoolUsage {
  std::vector<SegmentUsage> segments;

  bool operator==(const MemPoolUsage&) const = default;
  // Used chunks of every pool, segment by segment: what "back to idle" compares.
  std::vector<uint32_t> UsedChunks() const;
};

// One introspection sample as plain data.
MemPoolUsage FromIntrospection(const iox::roudi::MemPoolIntrospectionInfoContainer& sample);

// A table per segment, for people.
std::string FormatMemPoolUsage(const MemPoolUsage& usage);
// One line of JSON: {"segments":[{"id","writer_group","reader_group","pools":[{"chunk_payload_size",
// "chunk_size","chunks","used","min_free"}]}]}.
std::string MemPoolUsageToJson(const MemPoolUsage& usage);
// The inverse of MemPoolUsageToJson; InvalidArgument when `json` is not such a document.
Result<MemPoolUsage> MemPoolUsageFromJson(const std::string& json);

// Registers this process with the running RouDi as `runtime_name`, subscribes to its mempool
// introspection topic and returns the first sample RouDi takes after that (it samples about once
// a second while someone subscribes). Unavailable when no RouDi runs or no sample arrives within
// `timeout`; FailedPrecondition when this process already registered.
Result<MemPoolUsage> ReadMemPoolUsage(const std::string& runtime_name, std::chrono::milliseconds timeout);

}  // namespace radixserve::transport
