// The matcher over the real-world schemas of shared/jsonschema/cases.jsonl, token by token, with
// the llama-spm (32k) and gpt-2 (50k) vocabularies: every valid instance, tokenized as the
// tokenizer tokenizes text (a SentencePiece space prefix off its first token, as in generated
// output), is accepted token by token and ends where EOS is allowed, unless its object keys are
// out of the schema's order (counted apart: the order is fixed, as OpenAI's strict mode fixes
// it); every instance, valid or invalid, gets the same verdict token by token as byte by byte
// (so what json_schema_corpus_test shows of the grammar holds for the tokens). Compiled with the
// JSON Schema-exact options (integers may be written 1.0 where the draft allows it).
#include <gtest/gtest.h>

#include "tests/grammar/sanitized_stride.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/json_schema.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {
namespace {


using Json = nlohmann::ordered_json;

bool AcceptsTokens(const std::shared_ptr<const CompiledGrammar>& g, const std::vector<int32_t>& ids) {
  GrammarMatcher m(g);
  for (int32_t id : ids)
    if (!m.AcceptToken(id)) return false;
  return m.AcceptToken(g->vocab().eos_ids()[0]);
}

bool AcceptsBytes(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  GrammarMatcher m(g);
  return m.AcceptBytes(text) && m.CanEnd();
}

class TokenCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenCorpus, ValidInstancesWalkTokenByTokenAndEveryVerdictMatchesTheBytes) {
  auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + GetParam() + ".gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const auto vocab = TokenVocabOf(**tok);
  std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/jsonschema/cases.jsonl");
  ASSERT_TRUE(in) << "no shared/jsonschema/cases.jsonl";
  size_t schemas = 0, compiled = 0, valid = 0, accepted = 0, order = 0, invalid = 0, invalid_refused = 0;
  std::string line;
  for (size_t line_no = 0; std::getline(in, line); ++line_no) {
    if (line_no % kSanitizedStride != 0) continue;  // a sample under the sanitizers
    const Json c = Json::parse(line);
    ++schemas;
    auto g = CompileJsonSchema(c["schema"]);
    if (!g.ok()) continue;
    ++compiled;
    auto strict = std::make_shared<const CompiledGrammar>(std::move(g).value(), vocab);
    std::shared_ptr<const CompiledGrammar> any_order;
    const std::string id = c["id"].get<std::string>();
    for (const auto& inst : c["valid"]) {
      const std::string text = inst.get<std::string>();
      ++valid;
      const bool tokens = AcceptsTokens(strict, EncodeAsOutput(**tok, text));
      EXPECT_EQ(tokens, AcceptsBytes(strict, text)) << id << ": " << text;
      if (tokens) {
        ++accepted;
        continue;
      }
      if (!any_order) {
        JsonSchemaOptions o;
        o.strict_property_order = false;
        auto ga = CompileJsonSchema(c["schema"], o);
        ASSERT_TRUE(ga.ok()) << id << ": " << ga.status().ToString();
        any_order = std::make_shared<const CompiledGrammar>(std::move(ga).value(), vocab);
      }
      if (AcceptsBytes(any_order, text)) {
        ++order;
      } else {
        ADD_FAILURE() << id << ": a valid instance refused token by token: " << text;
      }
    }
    for (const auto& inst : c["invalid"]) {
      const std::string text = inst.get<std::string>();
      ++invalid;
      const bool tokens = AcceptsTokens(strict, EncodeAsOutput(**tok, text));
      EXPECT_EQ(tokens, AcceptsBytes(strict, text)) << id << ": " << text;
      invalid_refused += !tokens;
    }
  }
  std::printf("%s: %zu of %zu schemas compiled; valid instances %zu accepted of %zu (%zu out of key order); "
              "invalid instances %zu refused of %zu\n",
              GetParam().c_str(), compiled, schemas, accepted, valid, order, invalid_refused, invalid);
  EXPECT_GE(compiled * 100, schemas * 98);
  EXPECT_EQ(accepted + order, valid);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, TokenCorpus, ::testing::Values("llama-spm", "gpt-2"),
                         [](const auto& info) { return info.param == "gpt-2" ? std::string("gpt2") : std::string("llama_spm"); });

}  // namespace
}  // namespace radixserve::grammar
