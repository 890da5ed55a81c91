#include "transport/mempool_usage.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "iceoryx_posh/popo/subscriber.hpp"
#include "transport/channel.h"
#include "transport/roudi_process.h"

namespace radixserve::transport {

std::vector<uint32_t> MemPoolUsage::UsedChunks() const {
  std::vector<uint32_t> used;
  for (const SegmentUsage& s : segments)
    for (const PoolUsage& p : s.pools) used.push_back(p.used);
  return used;
}

MemPoolUsage FromIntrospection(const iox::roudi::MemPoolIntrospectionInfoContainer& sample) {
  MemPoolUsage usage;
  for (const auto& segment : sample) {
    SegmentUsage s;
    s.id = segment.m_id;
    s.writer_group = segment.m_writerGroupName.c_str();
    s.reader_group = segment.m_readerGroupName.c_str();
    for (const auto& pool : segment.m_mempoolInfo)
      s.pools.push_back({pool.m_chunkPayloadSize, pool.m_chunkSize, pool.m_numChunks, pool.m_usedChunks,
                         pool.m_minFreeChunks});
    usage.segments.push_back(std::move(s));
  }
  return usage;
}

std::string FormatMemPoolUsage(const MemPoolUsage& usage) {
  std::string out;
  char line[160];
  for (const SegmentUsage& s : usage.segments) {
    out += "segment " + std::to_string(s.id) + (s.id == 0 ? " (RouDi's own)" : "") + ": writer group '" +
           s.writer_group + "', reader group '" + s.reader_group + "'\n";
    std::snprintf(line, sizeof(line), "  %12s %10s %10s %10s\n", "payload", "chunks", "used", "min free");
    out += line;
    for (const PoolUsage& p : s.pools) {
      std::snprintf(line, sizeof(line), "  %12u %10u %10u %10u\n", p.chunk_payload_size, p.chunks, p.used,
                    p.min_free);
      out += line;
    }
  }
  return out;
}

std::string MemPoolUsageToJson(const MemPoolUsage& usage) {
  nlohmann::json segments = nlohmann::json::array();
  for (const SegmentUsage& s : usage.segments) {
    nlohmann::json pools = nlohmann::json::array();
    for (const PoolUsage& p : s.pools)
      pools.push_back(nlohmann::json{{"chunk_payload_size", p.chunk_payload_size},
                       {"chunk_size", p.chunk_size},
                       {"chunks", p.chunks},
                       {"used", p.used},
                       {"min_free", p.min_free}});
    segments.push_back(nlohmann::json{
        {"id", s.id}, {"writer_group", s.writer_group}, {"reader_group", s.reader_group}, {"pools", pools}});
  }
  return nlohmann::json{{"segments", segments}}.dump();
}

Result<MemPoolUsage> MemPoolUsageFromJson(const std::string& json) {
  auto doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded()) return Status::InvalidArgument("pool usage is not valid JSON");
  if (!doc.is_object() || !doc.contains("segments") || !doc["segments"].is_array())
    return Status::InvalidArgument("pool usage JSON has no \"segments\" array");
  auto count = [](const nlohmann::json& o, const char* key, uint32_t* out) {
    if (!o.contains(key) || !o[key].is_number_unsigned()) return false;
    *out = o[key].get<uint32_t>();
    return true;
  };
  MemPoolUsage usage;
  for (const auto& js : doc["segments"]) {
    SegmentUsage s;
    if (!js.is_object() || !count(js, "id", &s.id) || !js.contains("pools") || !js["pools"].is_array())
      return Status::InvalidArgument("pool usage JSON: a segment needs an \"id\" and a \"pools\" array");
    s.writer_group = js.value("writer_group", "");
    s.reader_group = js.value("reader_group", "");
    for (const auto& jp : js["pools"]) {
      PoolUsage p;
      if (!jp.is_object() || !count(jp, "chunk_payload_size", &p.chunk_payload_size) ||
          !count(jp, "chunk_size", &p.chunk_size) || !count(jp, "chunks", &p.chunks) || !count(jp, "used", &p.used) ||
          !count(jp, "min_free", &p.min_free))
        return Status::InvalidArgument("pool usage JSON: segment " + std::to_string(s.id) +
                                       " has a pool without chunk_payload_size, chunk_size, chunks, used, min_free");
      s.pools.push_back(p);
    }
    usage.segments.push_back(std::move(s));
  }
  return usage;
}

Result<MemPoolUsage> ReadMemPoolUsage(const std::string& runtime_name, std::chrono::milliseconds timeout) {
  // Checked first so that a missing RouDi is an immediate, clear error rather than iceoryx's wait.
  if (!RouDiRunning()) return Status::Unavailable("no iceoryx RouDi is running on this machine");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  RS_RETURN_IF_ERROR(InitRuntime(runtime_name, timeout));
  iox::popo::SubscriberOptions options;
  options.queueCapacity = 1;  // only the newest sample matters
  // No history: RouDi samples its pools only while someone subscribes, so the sample it keeps for
  // late joiners dates from the previous reader and can be arbitrarily old. The next one is fresh
  // and comes within RouDi's period (about a second).
  options.historyRequest = 0;
  iox::popo::Subscriber<iox::roudi::MemPoolIntrospectionInfoContainer> sub(iox::roudi::IntrospectionMempoolService,
                                                                          options);
  while (std::chrono::steady_clock::now() < deadline) {
    auto sample = sub.take();
    if (!sample.has_error()) return FromIntrospection(*sample.value());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Unavailable("RouDi sent no mempool introspection sample within " + std::to_string(timeout.count()) +
                             " ms (is its introspection running?)");
}

}  // namespace radixserve::transport
