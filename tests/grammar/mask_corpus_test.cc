// The token mask over the real-world schemas of shared/jsonschema/cases.jsonl, against a
// reference: at every step of a valid instance's tokens, the matcher's mask (per-context tables,
// tables derived from tables, subtrees of text taken whole, tables shared between grammars) is
// exactly the set of tokens a plain walk of the vocabulary trie from the whole state keeps
// alive. With llama-spm (32k, SentencePiece) and deepseek-llm (102k, byte-level BPE: partial
// UTF-8 tokens, tokens of up to 128 bytes); a sample of the schemas (every 8th; fewer under the
// sanitizers), tables shared across them all as the server's grammar cache shares them.
#include <gtest/gtest.h>

#include "tests/grammar/sanitized_stride.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/compile.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {
namespace {

constexpr size_t kSchemaStride = 8;
constexpr size_t kMaxStepsPerInstance = 160;

// The reference: every token whose bytes leave `state` alive, by a walk of the trie through a
// StackArena of its own (no tables); EOS where the state may end.
std::vector<uint32_t> ReferenceMask(StackArena& a, uint32_t state, const TokenVocab& v) {
  std::vector<uint32_t> mask(v.mask_words(), 0);
  const auto nodes = v.nodes();
  const auto toks = v.trie_tokens();
  std::vector<uint32_t> at(v.max_depth() + 1);
  at[0] = state;
  for (size_t i = 1; i < nodes.size();) {
    const uint32_t s = a.Advance(at[nodes[i].depth - 1], nodes[i].byte);
    if (s == StackArena::kDead) {
      i = nodes[i].end;
      continue;
    }
    for (uint32_t k = nodes[i].token_begin; k < nodes[i].token_end; ++k) mask[toks[k] >> 5] |= 1u << (toks[k] & 31);
    at[nodes[i].depth] = s;
    ++i;
  }
  if (a.accepting(state))
    for (int32_t id : v.eos_ids()) mask[id >> 5] |= 1u << (id & 31);
  return mask;
}

class MaskCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(MaskCorpus, EveryMaskAlongEveryValidInstanceIsTheReferenceMask) {
  auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + GetParam() + ".gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const auto vocab = TokenVocabOf(**tok);
  const auto shared = std::make_shared<SharedTables>();
  std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/jsonschema/cases.jsonl");
  ASSERT_TRUE(in) << "no shared/jsonschema/cases.jsonl";
  size_t schemas = 0, masks = 0, wrong_masks = 0;
  std::vector<uint32_t> mask(vocab->mask_words());
  std::string line;
  for (size_t line_no = 0; std::getline(in, line); ++line_no) {
    if (line_no % (kSchemaStride * kSanitizedStride) != 0) continue;
    const auto c = nlohmann::ordered_json::parse(line);
    auto g = CompileSpec(GrammarSpec{GrammarKind::kJsonSchema, c["schema"].dump()});
    if (!g.ok()) continue;
    ++schemas;
    const auto cg = std::make_shared<const CompiledGrammar>(std::move(g).value(), vocab, shared);
    const std::string id = c["id"].get<std::string>();
    for (const auto& inst : c["valid"]) {
      GrammarMatcher m(cg);
      StackArena ref(&cg->pda());
      uint32_t ref_state = ref.Initial();
      size_t step = 0;
      for (int32_t tid : EncodeAsOutput(**tok, inst.get<std::string>())) {
        if (step++ >= kMaxStepsPerInstance) break;
        m.FillNextTokenBitmask(mask.data());
        const std::vector<uint32_t> want = ReferenceMask(ref, ref_state, *vocab);
        ++masks;
        if (mask != want) {
          int shown = 0;
          for (int32_t t = 0; t < vocab->size() && shown < 3; ++t) {
            const bool got = (mask[t >> 5] >> (t & 31)) & 1, expected = (want[t >> 5] >> (t & 31)) & 1;
            if (got != expected && ++shown)
              ADD_FAILURE() << id << " step " << step << ": token " << t << " '" << vocab->piece(t) << "' mask "
                            << got << ", reference " << expected;
          }
          ++wrong_masks;
          break;
        }
        if (!m.AcceptToken(tid)) break;  // an instance the engine refuses (key order): stop here
        ref_state = ref.AdvanceBytes(ref_state, vocab->piece(tid));
      }
    }
  }
  std::printf("%s: %zu schemas, %zu masks compared, %zu wrong, %zu shared tables\n", GetParam().c_str(), schemas,
              masks, wrong_masks, shared->size());
  EXPECT_EQ(wrong_masks, 0u);
  EXPECT_GT(schemas, 2000 / (kSchemaStride * kSanitizedStride) * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, MaskCorpus, ::testing::Values("llama-spm", "deepseek-llm"));

}  // namespace
}  // namespace radixserve::grammar
