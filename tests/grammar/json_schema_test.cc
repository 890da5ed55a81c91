#include <gtest/gtest.h>
#include "core/grammar/json_schema.h"
#include "tests/grammar/byte_recognizer.h"
namespace radixserve::grammar {
namespace {
TEST(JsonSchema, Smoke) {
  auto g = CompileJsonSchemaText(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  testing::ByteRecognizer r(*g);
  EXPECT_TRUE(r.Recognizes(R"({"a":1})"));
}
}  // namespace
}  // namespace radixserve::grammar
