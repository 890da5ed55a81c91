// The KV pool's rules (launch/kv_budget.h) on made-up machines: no model, no RouDi.
#include "launch/kv_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

namespace radixserve::launch {
namespace {

constexpr uint64_t kMiB = 1 << 20;

KvBudgetInputs Medium(uint64_t mem_available_mib) {
  KvBudgetInputs in;
  in.geometry = {.layers = 12, .kv_dim = 4 * 64, .type = model::KvType::kF32};
  in.model_bytes = 126 * kMiB;
  in.mem_available = mem_available_mib * kMiB;
  in.context = 2048;
  return in;
}

TEST(KvBudget, BytesPerTokenIsLayersHeadsLengthsElement) {
  EXPECT_EQ(Medium(0).geometry.bytes_per_token(), 12 * 4 * 128 * 4);
}

// K and V of 12 layers x 256 values: F16 2 bytes a value; Q8_0 34 and Q4_0 18 bytes a block of 32.
TEST(KvBudget, BytesPerTokenFollowTheKvType) {
  KvBudgetInputs in = Medium(400);
  const std::pair<model::KvType, int64_t> want[] = {{model::KvType::kF32, 2 * 12 * 256 * 4},
                                                    {model::KvType::kF16, 2 * 12 * 256 * 2},
                                                    {model::KvType::kQ8_0, 2 * 12 * 8 * 34},
                                                    {model::KvType::kQ4_0, 2 * 12 * 8 * 18}};
  for (const auto& [type, bytes] : want) {
    in.geometry.type = type;
    EXPECT_EQ(in.geometry.bytes_per_token(), bytes) << model::KvTypeName(type);
    // The same 274 MiB after the weights hold more slots of a smaller type (up to the former pool).
    auto b = DecideKvBudget(in);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(b->slots, std::min<int64_t>(int64_t(0.5 * 274 * kMiB / bytes) - 256, 16384)) << model::KvTypeName(type);
    EXPECT_EQ(b->kv_type, type);
  }
}

TEST(KvBudget, DefaultIsHalfOfWhatIsFreeAfterTheWeightsWithinOneContextAndTheFormerPool) {
  // A 4 GB board with 1 GiB free: 0.5 x (1024 - 126) MiB / 24576 B - 256 = 18902 → capped at 16384.
  auto b = DecideKvBudget(Medium(1024));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->slots, 16384);
  // 400 MiB free: 0.5 x 274 MiB / 24576 B = 5845 - 256 = 5589 slots.
  b = DecideKvBudget(Medium(400));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, int64_t(0.5 * 274 * kMiB / 24576) - 256);
  EXPECT_EQ(b->kv_bytes, uint64_t(b->slots + 256) * 24576);
  // 200 MiB free: the fraction gives less than a context, so one context (2048), which fits.
  b = DecideKvBudget(Medium(200));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, 2048);
  // 150 MiB free: one context does not fit after the weights: refused, saying what to lower.
  b = DecideKvBudget(Medium(150));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("lower context:= or give kv_tokens:= / kv_memory:="), std::string::npos);
  // Two data-parallel groups share the budget.
  KvBudgetInputs two = Medium(400);
  two.replicas = 2;
  b = DecideKvBudget(two);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, int64_t(0.5 * 274 * kMiB / 2 / 24576) - 256);
}

TEST(KvBudget, ExplicitArguments) {
  KvBudgetInputs in = Medium(8192);
  in.kv_tokens = 40000;  // more than the former pool, when asked, if it fits
  auto b = DecideKvBudget(in);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, 40000);
  in.kv_tokens.reset();
  in.kv_memory_mib = 100;
  b = DecideKvBudget(in);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, int64_t(100 * kMiB / 24576) - 256);
  EXPECT_LE(b->kv_bytes, 100 * kMiB);
  in.kv_tokens = 1000;
  b = DecideKvBudget(in);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "kv_memory:=100 and kv_tokens:=1000 both size the KV pool: give at most one of them");
  in.kv_memory_mib.reset();
  in.kv_tokens = 10;
  EXPECT_FALSE(DecideKvBudget(in).ok());  // below 64 slots
  in.kv_tokens = 1000000;                 // 23 GiB of KV on 8 GiB
  b = DecideKvBudget(in);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("more than the memory left after the weights"), std::string::npos);
  in.kv_tokens.reset();
  in.kv_memory_mib = 5;  // 213 tokens: not even the padding and 64 slots
  EXPECT_FALSE(DecideKvBudget(in).ok());
}

TEST(KvBudget, TheLaunchFilesOwnSizeIsKeptAndTheArgumentsAreThenRefused) {
  KvBudgetInputs in = Medium(8192);
  in.file_slots = 4096;
  auto b = DecideKvBudget(in);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, 4096);
  in.kv_tokens = 1000;
  EXPECT_FALSE(DecideKvBudget(in).ok());
}

TEST(KvBudget, GpuDefaultIsTheFormerPool) {
  KvBudgetInputs in = Medium(100);
  in.gpu = true;
  auto b = DecideKvBudget(in);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->slots, 16384);
}

}  // namespace
}  // namespace radixserve::launch
