// Message layout: writing trailing arrays and rejecting every malformed header or array.
#include <gtest/gtest.h>

#include <vector>

#include "transport/message_layout.h"

namespace radixserve::transport {
namespace {

struct TestMsg {
  static constexpr MessageKind kKind = MessageKind::kTest;
  static constexpr uint16_t kLayoutVersion = 3;
  MessageHeader header;
  uint64_t request_id;
  ArrayRef tokens;  // int32
  ArrayRef text;    // char
};

std::vector<uint8_t> Build(size_t capacity = 4096) {
  std::vector<uint8_t> buf(capacity);
  MessageWriter<TestMsg> w(buf.data(), buf.size());
  w.msg()->request_id = 42;
  std::vector<int32_t> toks = {1, 2, 3, 4, 5};
  EXPECT_TRUE(w.Copy<int32_t>(w.msg()->tokens, toks));
  std::string s = "hello";
  EXPECT_TRUE(w.Copy<char>(w.msg()->text, std::span<const char>(s.data(), s.size())));
  buf.resize(w.size());
  return buf;
}

TEST(MessageLayout, WritesAndReadsBackArrays) {
  auto buf = Build();
  ASSERT_TRUE(ValidateHeader<TestMsg>(buf.data(), buf.size()).ok());
  const auto* m = reinterpret_cast<const TestMsg*>(buf.data());
  ASSERT_TRUE(ValidateArray<int32_t>(m, m->tokens, 100, "tokens").ok());
  ASSERT_TRUE(ValidateArray<char>(m, m->text, 100, "text").ok());
  auto toks = ArrayOf<int32_t>(m, m->tokens);
  EXPECT_EQ(std::vector<int32_t>(toks.begin(), toks.end()), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  auto text = ArrayOf<char>(m, m->text);
  EXPECT_EQ(std::string(text.begin(), text.end()), "hello");
  EXPECT_EQ(m->request_id, 42u);
  EXPECT_EQ(buf.size(), MessageSize<TestMsg>({5 * 4, 5}));
}

TEST(MessageLayout, WriterReportsOverflowInsteadOfWritingPastTheChunk) {
  std::vector<uint8_t> buf(64);
  MessageWriter<TestMsg> w(buf.data(), buf.size());
  std::vector<int32_t> toks(100, 7);
  EXPECT_FALSE(w.Copy<int32_t>(w.msg()->tokens, toks));
  EXPECT_TRUE(w.overflow());
  EXPECT_EQ(w.msg()->tokens.count, 0u);
}

TEST(MessageLayout, RejectsBadHeaders) {
  auto good = Build();
  {
    auto b = good;
    b[0] ^= 1;
    EXPECT_NE(ValidateHeader<TestMsg>(b.data(), b.size()).message().find("bad message magic"), std::string::npos);
  }
  {
    auto b = good;
    reinterpret_cast<MessageHeader*>(b.data())->kind = 4;
    EXPECT_NE(ValidateHeader<TestMsg>(b.data(), b.size()).message().find("expected a Test message, got kind 4"),
              std::string::npos);
  }
  {
    auto b = good;
    reinterpret_cast<MessageHeader*>(b.data())->layout_version = 2;
    EXPECT_NE(ValidateHeader<TestMsg>(b.data(), b.size()).message().find("layout version 2, this build speaks 3"),
              std::string::npos);
  }
  {
    auto b = good;
    reinterpret_cast<MessageHeader*>(b.data())->fixed_size = 8;
    EXPECT_FALSE(ValidateHeader<TestMsg>(b.data(), b.size()).ok());
  }
  {
    auto b = good;
    reinterpret_cast<MessageHeader*>(b.data())->total_size = 1 << 20;  // claims more than was received
    EXPECT_NE(ValidateHeader<TestMsg>(b.data(), b.size()).message().find("were received"), std::string::npos);
  }
  EXPECT_FALSE(ValidateHeader<TestMsg>(good.data(), 10).ok());  // shorter than the fixed part
}

TEST(MessageLayout, RejectsArraysOutsideTheBody) {
  auto good = Build();
  auto* m = reinterpret_cast<TestMsg*>(good.data());
  ArrayRef saved = m->tokens;
  m->tokens.count = 1000000;  // runs past the end
  EXPECT_FALSE(ValidateArray<int32_t>(m, m->tokens, 2000000, "tokens").ok());
  m->tokens = {4, 2};  // points into the header
  EXPECT_NE(ValidateArray<int32_t>(m, m->tokens, 100, "tokens").message().find("outside the message body"),
            std::string::npos);
  m->tokens = {saved.offset + 1, 1};  // misaligned
  EXPECT_FALSE(ValidateArray<int32_t>(m, m->tokens, 100, "tokens").ok());
  m->tokens = saved;
  EXPECT_NE(ValidateArray<int32_t>(m, m->tokens, 4, "tokens").message().find("limit 4"), std::string::npos);
  m->tokens = {0xFFFFFFF0u, 0xFFFFFFFFu};  // offset + count * size overflows 32 bits
  EXPECT_FALSE(ValidateArray<int32_t>(m, m->tokens, 0xFFFFFFFFu, "tokens").ok());
}

}  // namespace
}  // namespace radixserve::transport

#include <grp.h>
#include <unistd.h>

#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

TEST(RouDiConfig, PoolsHoldTheLargestMessageAndOnlyOurGroupMayUseTheSegment) {
  RouDiConfig c = PipelineRouDiConfig(3'000'001);
  EXPECT_GE(c.max_payload(), 3'000'001u);
  EXPECT_EQ(c.max_payload() % 8, 0u);
  const group* g = getgrgid(getegid());
  ASSERT_NE(g, nullptr);
  std::string toml = c.ToToml();
  EXPECT_NE(toml.find(std::string("reader = \"") + g->gr_name + "\""), std::string::npos) << toml;
  EXPECT_NE(toml.find(std::string("writer = \"") + g->gr_name + "\""), std::string::npos) << toml;
  auto parsed = MaxPayloadFromToml(toml);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, c.max_payload());
  EXPECT_FALSE(MaxPayloadFromToml("[general]\nversion = 1\n").ok());
}

}  // namespace
}  // namespace radixserve::transport
