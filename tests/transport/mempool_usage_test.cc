// Pool usage from a filled RouDi introspection sample: conversion, table, JSON and back. No RouDi.
#include "transport/mempool_usage.h"

#include <gtest/gtest.h>

#include <memory>

#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

using Sample = iox::roudi::MemPoolIntrospectionInfoContainer;

iox::roudi::MemPoolInfo Pool(uint32_t payload, uint32_t chunks, uint32_t used, uint32_t min_free) {
  iox::roudi::MemPoolInfo p;
  p.m_chunkPayloadSize = payload;
  p.m_chunkSize = payload + 64;
  p.m_numChunks = chunks;
  p.m_usedChunks = used;
  p.m_minFreeChunks = min_free;
  return p;
}

// RouDi's own segment with one pool, then a user segment of the group "radix" with two.
std::unique_ptr<Sample> TwoSegments() {
  auto sample = std::make_unique<Sample>();  // large: several KiB of fixed-capacity vectors
  EXPECT_TRUE(sample->emplace_back());
  auto& own = sample->back();
  own.m_id = 0;
  own.m_writerGroupName = iox::cxx::string<iox::roudi::MAX_GROUP_NAME_LENGTH>("root");
  own.m_readerGroupName = iox::cxx::string<iox::roudi::MAX_GROUP_NAME_LENGTH>("root");
  own.m_mempoolInfo.push_back(Pool(8192, 100, 3, 95));
  EXPECT_TRUE(sample->emplace_back());
  auto& user = sample->back();
  user.m_id = 1;
  user.m_writerGroupName = iox::cxx::string<iox::roudi::MAX_GROUP_NAME_LENGTH>("radix");
  user.m_readerGroupName = iox::cxx::string<iox::roudi::MAX_GROUP_NAME_LENGTH>("readers");
  user.m_mempoolInfo.push_back(Pool(1024, 4096, 12, 4000));
  user.m_mempoolInfo.push_back(Pool(262144, 128, 0, 120));
  return sample;
}

TEST(MemPoolUsage, ConvertsEverySegmentAndPool) {
  MemPoolUsage u = FromIntrospection(*TwoSegments());
  ASSERT_EQ(u.segments.size(), 2u);
  EXPECT_EQ(u.segments[0].id, 0u);
  EXPECT_EQ(u.segments[0].writer_group, "root");
  ASSERT_EQ(u.segments[0].pools.size(), 1u);
  EXPECT_EQ(u.segments[0].pools[0], (PoolUsage{8192, 8256, 100, 3, 95}));
  EXPECT_EQ(u.segments[1].id, 1u);
  EXPECT_EQ(u.segments[1].writer_group, "radix");
  EXPECT_EQ(u.segments[1].reader_group, "readers");
  ASSERT_EQ(u.segments[1].pools.size(), 2u);
  EXPECT_EQ(u.segments[1].pools[0], (PoolUsage{1024, 1088, 4096, 12, 4000}));
  EXPECT_EQ(u.segments[1].pools[1], (PoolUsage{262144, 262208, 128, 0, 120}));
  EXPECT_EQ(u.UsedChunks(), (std::vector<uint32_t>{3, 12, 0}));
}

TEST(MemPoolUsage, EmptySampleHasNoSegments) {
  Sample empty;
  EXPECT_TRUE(FromIntrospection(empty).segments.empty());
  EXPECT_EQ(MemPoolUsageToJson(FromIntrospection(empty)), R"({"segments":[]})");
}

TEST(MemPoolUsage, TableShowsEachSegmentAndPool) {
  std::string table = FormatMemPoolUsage(FromIntrospection(*TwoSegments()));
  EXPECT_NE(table.find("segment 0 (RouDi's own): writer group 'root', reader group 'root'"), std::string::npos)
      << table;
  EXPECT_NE(table.find("segment 1: writer group 'radix', reader group 'readers'"), std::string::npos) << table;
  EXPECT_NE(table.find("payload"), std::string::npos);
  EXPECT_NE(table.find("min free"), std::string::npos);
  // One row per pool: payload, chunks, used, min free.
  EXPECT_NE(table.find("        1024       4096         12       4000\n"), std::string::npos) << table;
  EXPECT_NE(table.find("      262144        128          0        120\n"), std::string::npos) << table;
}

TEST(MemPoolUsage, JsonIsOneLineAndRoundTrips) {
  MemPoolUsage u = FromIntrospection(*TwoSegments());
  std::string json = MemPoolUsageToJson(u);
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_NE(json.find(R"("chunk_payload_size":1024,"chunk_size":1088,"chunks":4096,"min_free":4000,"used":12)"),
            std::string::npos)
      << json;
  auto back = MemPoolUsageFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, u);
}

TEST(MemPoolUsage, MalformedJsonIsRefused) {
  for (const char* bad : {"", "not json", "[]", R"({"pools":[]})", R"({"segments":{}})",
                          R"({"segments":[{"pools":[]}]})", R"({"segments":[{"id":1}]})",
                          R"({"segments":[{"id":1,"pools":[{"chunk_payload_size":8}]}]})",
                          R"({"segments":[{"id":1,"pools":[{"chunk_payload_size":8,"chunk_size":72,"chunks":-1,)"
                          R"("used":0,"min_free":0}]}]})",
                          R"({"segments":[{"id":1,"pools":[{"chunk_payload_size":8,"chunk_size":72,"chunks":1,)"
                          R"("used":"0","min_free":0}]}]})"}) {
    auto r = MemPoolUsageFromJson(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(MemPoolUsage, ReadingWithoutRouDiIsAClearError) {
  // Tests that start a RouDi hold ctest's iceoryx lock, as this one does: one running now is a
  // stray (this process must not register with it), and the check below would mean nothing.
  ASSERT_FALSE(RouDiRunning()) << "a RouDi is running on this machine: stop it before running this test";
  auto r = ReadMemPoolUsage("radixserve_mempool_usage_test", std::chrono::milliseconds(200));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("no iceoryx RouDi is running"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace radixserve::transport
