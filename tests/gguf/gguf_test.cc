// GGUF reader and writer: round trips, the real stories260K file, and one test per corruption case.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"

namespace radixserve::gguf {
namespace {

// Builds raw GGUF bytes by hand, so each corruption case is explicit.
class RawBuilder {
 public:
  template <typename T>
  RawBuilder& Put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  RawBuilder& Str(const std::string& s) {
    Put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  RawBuilder& Header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return Put<uint32_t>(kMagic).Put<uint32_t>(version).Put<uint64_t>(n_tensors).Put<uint64_t>(n_kv);
  }
  RawBuilder& Pad(size_t alignment = 32) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  std::vector<uint8_t> bytes;
};

Result<std::unique_ptr<GgufFile>> ParseBytes(const std::vector<uint8_t>& b) {
  return GgufFile::Parse(std::span<const uint8_t>(b.data(), b.size()), "test.gguf");
}

void ExpectError(const std::vector<uint8_t>& b, StatusCode code, const std::string& fragment) {
  auto r = ParseBytes(b);
  ASSERT_FALSE(r.ok()) << "expected failure containing: " << fragment;
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("test.gguf"), std::string::npos) << r.status().ToString();
}

std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

GgufWriter MakeRichWriter(uint32_t version) {
  GgufWriter w(version);
  w.SetString("general.architecture", "llama");
  w.Set("u8", Value(uint8_t{200}));
  w.Set("i8", Value(int8_t{-7}));
  w.Set("u16", Value(uint16_t{65000}));
  w.Set("i16", Value(int16_t{-30000}));
  w.SetU32("u32", 4000000000u);
  w.SetI32("i32", -2000000000);
  w.SetF32("f32", 1.5f);
  w.SetBool("yes", true);
  w.Set("u64", Value(uint64_t{1} << 40));
  w.Set("i64", Value(int64_t{-(int64_t{1} << 40)}));
  w.Set("f64", Value(2.25));
  w.SetString("empty", "");
  w.SetStringArray("strings", {"a", "", "héllo", std::string("nul\0in", 6)});
  w.SetF32Array("floats", {0.5f, -1.0f});
  w.SetI32Array("ints", {1, -2, 3});
  // A nested array: array of arrays of uint8.
  auto inner1 = std::make_shared<Array>(Array{ValueType::kUint8, {Value(uint8_t{1}), Value(uint8_t{2})}});
  auto inner2 = std::make_shared<Array>(Array{ValueType::kUint8, {}});
  w.Set("nested", Value(std::make_shared<Array>(Array{ValueType::kArray, {Value(inner1), Value(inner2)}})));
  EXPECT_TRUE(w.AddTensor("a", {4, 2}, TensorType::kF32, F32Bytes({1, 2, 3, 4, 5, 6, 7, 8})).ok());
  std::vector<uint8_t> q(34 * 2, 0x11);
  EXPECT_TRUE(w.AddTensor("q", {64}, TensorType::kQ8_0, q).ok());
  std::vector<uint8_t> h(2 * 3, 0x3c);
  EXPECT_TRUE(w.AddTensor("h", {3}, TensorType::kF16, h).ok());
  return w;
}

void ExpectValuesEqual(const Value& a, const Value& b) {
  ASSERT_EQ(TypeOf(a), TypeOf(b));
  if (TypeOf(a) == ValueType::kArray) {
    const auto& x = *std::get<std::shared_ptr<Array>>(a);
    const auto& y = *std::get<std::shared_ptr<Array>>(b);
    ASSERT_EQ(x.elem_type, y.elem_type);
    ASSERT_EQ(x.items.size(), y.items.size());
    for (size_t i = 0; i < x.items.size(); ++i) ExpectValuesEqual(x.items[i], y.items[i]);
  } else {
    EXPECT_TRUE(a == b);
  }
}

class RoundTrip : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RoundTrip, WriterOutputReadsBackIdentically) {
  GgufWriter w = MakeRichWriter(GetParam());
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = ParseBytes(*bytes);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GgufFile& g = **f;
  EXPECT_EQ(g.version(), GetParam());
  EXPECT_EQ(g.metadata().size(), 17u);
  EXPECT_EQ(*g.GetString("general.architecture"), "llama");
  EXPECT_EQ(*g.GetInt("u8"), 200);
  EXPECT_EQ(*g.GetInt("i8"), -7);
  EXPECT_EQ(*g.GetInt("u32"), 4000000000);
  EXPECT_EQ(*g.GetInt("i64"), -(int64_t{1} << 40));
  EXPECT_DOUBLE_EQ(*g.GetFloat("f32"), 1.5);
  EXPECT_DOUBLE_EQ(*g.GetFloat("f64"), 2.25);
  EXPECT_TRUE(*g.GetBool("yes"));
  auto strings = g.GetStringArray("strings");
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ(strings->size(), 4u);
  EXPECT_EQ((*strings)[2], "héllo");
  EXPECT_EQ((*strings)[3], std::string("nul\0in", 6));
  EXPECT_EQ(*g.GetIntArray("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(*g.GetFloatArray("floats"), (std::vector<float>{0.5f, -1.0f}));

  // Same keys, same order, same values as written.
  auto again = ParseBytes(*bytes);
  for (size_t i = 0; i < g.metadata().size(); ++i) {
    EXPECT_EQ(g.metadata()[i].key, (*again)->metadata()[i].key);
    ExpectValuesEqual(g.metadata()[i].value, (*again)->metadata()[i].value);
  }
  const TensorInfo* a = g.FindTensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dims, (std::vector<uint64_t>{4, 2}));
  float a5 = 0;
  std::memcpy(&a5, g.TensorData(*a) + 5 * 4, 4);
  EXPECT_EQ(a5, 6.0f);
  const TensorInfo* q = g.FindTensor("q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, TensorType::kQ8_0);
  EXPECT_EQ(q->num_bytes(), 68u);
  EXPECT_EQ(g.TensorData(*q)[67], 0x11);
  EXPECT_EQ(g.data_offset() % 32, 0u);

  // Re-serialising what was read gives the same bytes.
  GgufWriter w2(g.version());
  for (const auto& kv : g.metadata()) w2.Set(kv.key, kv.value);
  for (const auto& t : g.tensors()) {
    std::vector<uint8_t> data(g.TensorData(t), g.TensorData(t) + t.num_bytes());
    ASSERT_TRUE(w2.AddTensor(t.name, t.dims, t.type, data).ok());
  }
  EXPECT_EQ(*w2.Serialize(), *bytes);
}

INSTANTIATE_TEST_SUITE_P(Versions, RoundTrip, ::testing::Values(2u, 3u));

TEST(GgufFile, WriteFileThenOpenMapsTheSameBytes) {
  GgufWriter w = MakeRichWriter(3);
  std::string path = (std::filesystem::temp_directory_path() / "radixserve_gguf_test.gguf").string();
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto bytes = w.Serialize();
  const TensorInfo* h = (*f)->FindTensor("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(0, std::memcmp((*f)->TensorData(*h), bytes->data() + (*f)->data_offset() + h->offset, 6));
  std::filesystem::remove(path);
}

TEST(GgufFile, ReadsStories260K) {
  auto f = GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GgufFile& g = **f;
  EXPECT_EQ(*g.GetString("general.architecture"), "llama");
  EXPECT_EQ(*g.GetInt("llama.context_length"), 512);
  EXPECT_EQ(*g.GetInt("llama.embedding_length"), 64);
  EXPECT_EQ(*g.GetInt("llama.block_count"), 5);
  EXPECT_EQ(g.GetStringArray("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_EQ(*g.GetString("tokenizer.ggml.model"), "llama");
  const TensorInfo* emb = g.FindTensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->dims, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(emb->type, TensorType::kF32);
  EXPECT_NE(g.FindTensor("blk.4.ffn_down.weight"), nullptr);
}

TEST(GgufFile, TypedGettersReportMissingAndMistypedKeys) {
  GgufWriter w = MakeRichWriter(3);
  auto f = ParseBytes(*w.Serialize());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->GetInt("nope").status().code(), StatusCode::kNotFound);
  auto wrong = (*f)->GetString("u32");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("expected string, got uint32"), std::string::npos);
  EXPECT_EQ((*f)->GetStringArray("ints").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*f)->GetIntOr("nope", 42), 42);
}

TEST(GgufFile, MissingFileIsNotFound) {
  auto f = GgufFile::Open("/nonexistent/model.gguf");
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
}

// ---- corruption: one case each ------------------------------------------------

TEST(GgufCorrupt, BadMagic) {
  RawBuilder b;
  b.Put<uint32_t>(0x4c4c4747).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(0);
  ExpectError(b.bytes, StatusCode::kCorrupt, "bad magic: expected \"GGUF\", got \"GGLL\"");
}

TEST(GgufCorrupt, UnsupportedVersion) {
  for (uint32_t v : {1u, 4u, 0xffffffffu}) {
    RawBuilder b;
    b.Header(0, 0, v);
    ExpectError(b.bytes, StatusCode::kUnsupported, "unsupported GGUF version " + std::to_string(v));
  }
}

TEST(GgufCorrupt, EveryTruncationIsAnErrorNotACrash) {
  auto full = *MakeRichWriter(3).Serialize();
  ASSERT_TRUE(ParseBytes(full).ok());
  // The last tensor's data ends before the final padding; cut anywhere before that.
  auto f = ParseBytes(full);
  const auto& last = (*f)->tensors().back();
  size_t data_end = (*f)->data_offset() + last.offset + last.num_bytes();
  for (size_t n = 0; n < data_end; ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    auto r = ParseBytes(cut);
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().ToString();
  }
}

TEST(GgufCorrupt, TruncatedHeaderNamesWhatWasExpected) {
  RawBuilder b;
  b.Put<uint32_t>(kMagic).Put<uint32_t>(3).Put<uint32_t>(0);
  ExpectError(b.bytes, StatusCode::kCorrupt, "offset 8: truncated file: expected 8 bytes of tensor count");
}

TEST(GgufCorrupt, TensorDataOutOfBounds) {
  RawBuilder b;
  b.Header(1, 0).Str("w").Put<uint32_t>(1).Put<uint64_t>(8).Put<uint32_t>(0).Put<uint64_t>(0).Pad();
  b.bytes.resize(b.bytes.size() + 16);  // 16 of the 32 bytes of data
  ExpectError(b.bytes, StatusCode::kCorrupt, "tensor 'w' data (32 bytes at data offset 0) runs past the end");
}

TEST(GgufCorrupt, TensorOffsetBeyondFile) {
  RawBuilder b;
  b.Header(1, 0).Str("w").Put<uint32_t>(1).Put<uint64_t>(8).Put<uint32_t>(0).Put<uint64_t>(1ull << 62).Pad();
  ExpectError(b.bytes, StatusCode::kCorrupt, "runs past the end of the file");
}

TEST(GgufCorrupt, UnknownTensorType) {
  RawBuilder b;
  b.Header(1, 0).Str("w").Put<uint32_t>(1).Put<uint64_t>(8).Put<uint32_t>(99).Put<uint64_t>(0).Pad();
  b.bytes.resize(b.bytes.size() + 64);
  ExpectError(b.bytes, StatusCode::kCorrupt, "tensor 'w' has unknown tensor type 99");
}

TEST(GgufCorrupt, RowNotMultipleOfBlock) {
  RawBuilder b;
  b.Header(1, 0).Str("w").Put<uint32_t>(1).Put<uint64_t>(33).Put<uint32_t>(8).Put<uint64_t>(0).Pad();
  b.bytes.resize(b.bytes.size() + 64);
  ExpectError(b.bytes, StatusCode::kCorrupt, "not a multiple of the Q8_0 block size 32");
}

TEST(GgufCorrupt, OverflowingCounts) {
  {
    RawBuilder b;
    b.Header(0, 1ull << 60);
    ExpectError(b.bytes, StatusCode::kCorrupt, "metadata count 1152921504606846976 cannot fit");
  }
  {
    RawBuilder b;
    b.Header(~0ull, 0);
    ExpectError(b.bytes, StatusCode::kCorrupt, "tensor count 18446744073709551615 cannot fit");
  }
  {
    RawBuilder b;  // an array claiming 2^61 uint32 elements
    b.Header(0, 1).Str("arr").Put<uint32_t>(9).Put<uint32_t>(4).Put<uint64_t>(1ull << 61);
    ExpectError(b.bytes, StatusCode::kCorrupt, "array of 2305843009213693952 uint32 values cannot fit");
  }
  {
    RawBuilder b;  // a string claiming 2^63 bytes
    b.Header(0, 1).Str("s").Put<uint32_t>(8).Put<uint64_t>(1ull << 63);
    ExpectError(b.bytes, StatusCode::kCorrupt, "string value of length 9223372036854775808");
  }
  {
    RawBuilder b;  // tensor dims whose product overflows 64 bits
    b.Header(1, 0).Str("w").Put<uint32_t>(2).Put<uint64_t>(1ull << 40).Put<uint64_t>(1ull << 40);
    b.Put<uint32_t>(0).Put<uint64_t>(0);
    ExpectError(b.bytes, StatusCode::kCorrupt, "tensor 'w' element count overflows");
  }
}

TEST(GgufCorrupt, UnknownValueType) {
  RawBuilder b;
  b.Header(0, 1).Str("k").Put<uint32_t>(13).Put<uint32_t>(0);
  ExpectError(b.bytes, StatusCode::kCorrupt, "metadata key 'k' has unknown value type 13");
}

TEST(GgufCorrupt, TooManyDimensions) {
  RawBuilder b;
  b.Header(1, 0).Str("w").Put<uint32_t>(5);
  b.bytes.resize(b.bytes.size() + 64);
  ExpectError(b.bytes, StatusCode::kCorrupt, "tensor 'w' has 5 dimensions (expected 1..4)");
}

TEST(GgufCorrupt, BadAlignment) {
  RawBuilder b;
  b.Header(0, 1).Str("general.alignment").Put<uint32_t>(4).Put<uint32_t>(24);
  ExpectError(b.bytes, StatusCode::kCorrupt, "must be a power of two, got 24");
}

TEST(GgufCorrupt, DeeplyNestedArrays) {
  RawBuilder b;
  b.Header(0, 1).Str("deep").Put<uint32_t>(9);
  for (int i = 0; i < 100; ++i) b.Put<uint32_t>(9).Put<uint64_t>(1);
  ExpectError(b.bytes, StatusCode::kCorrupt, "arrays nested deeper than 8 levels");
}

TEST(GgufCorrupt, DuplicateKeyAndBadBool) {
  {
    RawBuilder b;
    b.Header(0, 2).Str("k").Put<uint32_t>(4).Put<uint32_t>(1).Str("k").Put<uint32_t>(4).Put<uint32_t>(2);
    ExpectError(b.bytes, StatusCode::kCorrupt, "duplicate metadata key 'k'");
  }
  {
    RawBuilder b;
    b.Header(0, 1).Str("b").Put<uint32_t>(7).Put<uint8_t>(7);
    ExpectError(b.bytes, StatusCode::kCorrupt, "bool value must be 0 or 1, got 7");
  }
}

TEST(GgufCorrupt, RandomByteFlipsNeverCrash) {
  auto full = *MakeRichWriter(3).Serialize();
  uint64_t state = 12345;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = full;
    for (int k = 0; k < 3; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      b[(state >> 33) % b.size()] ^= static_cast<uint8_t>(state >> 20);
    }
    auto r = ParseBytes(b);  // either parses or reports; ASan/UBSan builds check for memory errors
    if (!r.ok()) {
      EXPECT_FALSE(r.status().message().empty());
    }
  }
}

}  // namespace
}  // namespace radixserve::gguf
