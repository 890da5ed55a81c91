// GrammarMatcher: the token mask is exactly the set of tokens AcceptToken takes, on a real
// 32k vocabulary; EOS only where the grammar may end; rollback, fork, forced continuations; the
// grammar cache's bound.
#include "core/grammar/matcher.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/compile.h"
#include "core/grammar/gbnf.h"
#include "core/grammar/grammar_cache.h"
#include "core/grammar/regex.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {
namespace {

struct Loaded {
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<const TokenVocab> vocab;
};

const Loaded& Vocab(const std::string& name) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf");
  EXPECT_TRUE(file.ok()) << file.status().message();
  auto tok = Tokenizer::FromGguf(**file);
  EXPECT_TRUE(tok.ok()) << tok.status().message();
  Loaded l;
  l.tokenizer = std::move(tok).value();
  l.vocab = TokenVocabOf(*l.tokenizer);
  return cache.emplace(name, std::move(l)).first->second;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<const CompiledGrammar> Compiled(Result<Grammar> g, const std::shared_ptr<const TokenVocab>& v) {
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::make_shared<const CompiledGrammar>(std::move(g).value(), v);
}

bool Bit(const std::vector<uint32_t>& m, int32_t id) { return (m[id >> 5] >> (id & 31)) & 1; }

// Every token: in the mask iff a fork of the matcher accepts it.
void ExpectMaskIsExact(GrammarMatcher& m, const TokenVocab& v, const std::string& where) {
  std::vector<uint32_t> mask(v.mask_words());
  m.FillNextTokenBitmask(mask.data());
  int allowed = 0, wrong = 0;
  for (int32_t id = 0; id < v.size(); ++id) {
    GrammarMatcher f = m.Fork();
    const bool takes = f.AcceptToken(id);
    allowed += takes;
    if (takes != Bit(mask, id) && ++wrong <= 5)
      ADD_FAILURE() << where << ": token " << id << " '" << v.piece(id) << "' mask " << Bit(mask, id)
                    << " accept " << takes;
  }
  EXPECT_EQ(wrong, 0) << where;
  EXPECT_GT(allowed, 0) << where;
}

// Feeds `text` as the tokenizer tokenizes it, checking the mask at every step.
void WalkText(const std::shared_ptr<const CompiledGrammar>& g, const Loaded& l, const std::string& text) {
  GrammarMatcher m(g);
  std::vector<int32_t> ids = EncodeAsOutput(*l.tokenizer, text);
  std::string prefix;
  for (int32_t id : ids) {
    ExpectMaskIsExact(m, *l.vocab, "after '" + prefix + "'");
    ASSERT_TRUE(m.AcceptToken(id)) << "'" << l.vocab->piece(id) << "' after '" << prefix << "'";
    prefix += l.vocab->piece(id);
  }
  ASSERT_EQ(prefix, text);
  ExpectMaskIsExact(m, *l.vocab, "at the end of '" + text + "'");
  EXPECT_TRUE(m.CanEnd());
  EXPECT_TRUE(m.AcceptToken(l.vocab->eos_ids()[0]));
  EXPECT_TRUE(m.terminated());
}

TEST(GrammarMatcher, MaskIsExactlyTheAcceptedTokensAlongAJsonText) {
  const Loaded& l = Vocab("llama-spm");
  auto g = Compiled(CompileGbnf(ReadFile(std::string(RADIXSERVE_SHARED_DIR) + "/grammars/json.gbnf")), l.vocab);
  WalkText(g, l, "{\"name\": \"Ann \\\"A\\\" Lee\", \"age\": 42, \"tags\": [\"x\", true, null, -1.5e3], \"o\": {}}");
}

TEST(GrammarMatcher, MaskIsExactlyTheAcceptedTokensForARegexOnByteLevelBpe) {
  const Loaded& l = Vocab("gpt-2");
  auto g = Compiled(CompileRegex("[a-z]{1,5}(, [0-9]+)*\\.?"), l.vocab);
  WalkText(g, l, "abc, 12, 345.");
  WalkText(g, l, "z");
}

// llama.cpp's example grammars, matched token by token on a byte-level vocabulary: a string each
// describes walks with the exact mask at every step; a near miss is refused before it ends.
TEST(GrammarMatcher, SharedGbnfGrammarsMatchTokenByToken) {
  const Loaded& l = Vocab("gpt-2");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"arithmetic.gbnf", "(a+b)*c=d\n1=2\n", "1+=3\n"},
      {"c.gbnf", "int main(){return 0;}", "int main(){return 0}"},
      {"chess.gbnf", "1. e4 e5\n2. Nf3 Nc6\n", "1. e9 e5\n2. d4 d5\n"},
      {"english.gbnf", "Hello, world!", "Hello  world"},
      {"japanese.gbnf", "\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF", "abc"},
      {"json.gbnf", "{\"a\": 1, \"b\": [true, null, \"x\\n\"]}", "{\"a\" 1}"},
      {"json_arr.gbnf", "[\n{\"a\": true},\n\"s\"]", "[1]"},
      {"list.gbnf", "- milk\n- eggs\n", "-milk\n"},
  };
  for (const auto& [file, good, bad] : cases) {
    SCOPED_TRACE(file);
    auto g = Compiled(CompileGbnf(ReadFile(std::string(RADIXSERVE_SHARED_DIR) + "/grammars/" + file)), l.vocab);
    WalkText(g, l, good);
    GrammarMatcher m(g);
    bool refused = false;
    for (int32_t id : EncodeAsOutput(*l.tokenizer, bad))
      if (!m.AcceptToken(id)) {
        refused = true;
        break;
      }
    EXPECT_TRUE(refused || !m.CanEnd()) << bad;
  }
}

TEST(GrammarMatcher, EosOnlyWhereTheGrammarMayEndAndNothingAfterIt) {
  const Loaded& l = Vocab("llama-spm");
  auto g = Compiled(CompileRegex("ab(cd)?"), l.vocab);
  GrammarMatcher m(g);
  const int32_t eos = l.vocab->eos_ids()[0];
  std::vector<uint32_t> mask(l.vocab->mask_words());
  EXPECT_FALSE(m.CanEnd());
  m.FillNextTokenBitmask(mask.data());
  EXPECT_FALSE(Bit(mask, eos));
  EXPECT_FALSE(m.AcceptToken(eos));
  ASSERT_TRUE(m.AcceptBytes("ab"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.MustEnd());
  m.FillNextTokenBitmask(mask.data());
  EXPECT_TRUE(Bit(mask, eos));
  ASSERT_TRUE(m.AcceptBytes("cd"));
  EXPECT_TRUE(m.MustEnd());
  m.FillNextTokenBitmask(mask.data());
  int set = 0;
  for (int32_t id = 0; id < l.vocab->size(); ++id) set += Bit(mask, id);
  EXPECT_EQ(set, static_cast<int>(l.vocab->eos_ids().size()));
  EXPECT_TRUE(m.AcceptToken(eos));
  m.FillNextTokenBitmask(mask.data());
  for (uint32_t w : mask) EXPECT_EQ(w, 0u);
  EXPECT_FALSE(m.AcceptBytes("x"));
}

TEST(GrammarMatcher, SpecialTokensNeverMatch) {
  const Loaded& l = Vocab("llama-spm");
  // A grammar of any bytes at all still refuses control tokens (<s>, </s>, <unk>).
  GrammarBuilder b;
  const Symbol any = b.Star({b.Bytes(ByteSet::All())});
  const uint32_t root = b.NewRule("root");
  b.AddAlternative(root, {any});
  auto g = Compiled(b.Finish(root), l.vocab);
  GrammarMatcher m(g);
  std::vector<uint32_t> mask(l.vocab->mask_words());
  m.FillNextTokenBitmask(mask.data());
  const int32_t bos = l.tokenizer->bos_id();
  EXPECT_FALSE(Bit(mask, bos));
  EXPECT_FALSE(m.AcceptToken(bos));
  EXPECT_TRUE(Bit(mask, l.tokenizer->eos_id()));  // the grammar may end at once
  const auto hello = l.tokenizer->Encode("hello", false, false);
  EXPECT_TRUE(Bit(mask, hello[0]));
}

TEST(GrammarMatcher, RollbackRestoresAndForksAreIndependent) {
  const Loaded& l = Vocab("llama-spm");
  auto g = Compiled(CompileRegex("(yes|no), (red|green)"), l.vocab);
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptBytes("yes"));
  GrammarMatcher fork = m.Fork();
  ASSERT_TRUE(fork.AcceptBytes(", red"));
  EXPECT_TRUE(fork.MustEnd());
  EXPECT_FALSE(m.CanEnd());
  EXPECT_FALSE(m.AcceptBytes("no"));
  ASSERT_TRUE(m.AcceptBytes(","));
  ASSERT_TRUE(m.AcceptBytes(" green"));
  EXPECT_TRUE(m.MustEnd());
  ASSERT_TRUE(m.Rollback(2).ok());
  EXPECT_EQ(m.ForcedContinuation(), ", ");
  ASSERT_TRUE(m.Rollback(1).ok());
  EXPECT_TRUE(m.AcceptBytes("no"));
  EXPECT_FALSE(m.Rollback(5).ok());
}

TEST(GrammarMatcher, ForcedContinuationStopsWhereTheGrammarBranches) {
  const Loaded& l = Vocab("llama-spm");
  auto g = Compiled(CompileGbnf("root ::= \"{\\\"name\\\": \\\"\" [a-z]+ \"\\\"}\""), l.vocab);
  GrammarMatcher m(g);
  EXPECT_EQ(m.ForcedContinuation(), "{\"name\": \"");
  ASSERT_TRUE(m.AcceptBytes("{\"name\": \"bob"));
  EXPECT_EQ(m.ForcedContinuation(), "");
}

TEST(GrammarCache, KeepsAtMostItsCapacityAndSharesGrammars) {
  const Loaded& l = Vocab("llama-spm");
  GrammarCache cache(l.vocab, 4);
  auto first = cache.Get(GrammarSpec{GrammarKind::kRegex, "a0"});
  ASSERT_TRUE(first.ok());
  for (int i = 0; i < 50; ++i) {
    auto g = cache.Get(GrammarSpec{GrammarKind::kRegex, "a" + std::to_string(i)});
    ASSERT_TRUE(g.ok());
    EXPECT_LE(cache.size(), 4u);
  }
  auto again = cache.Get(GrammarSpec{GrammarKind::kRegex, "a49"});
  ASSERT_TRUE(again.ok());
  auto again2 = cache.Get(GrammarSpec{GrammarKind::kRegex, "a49"});
  EXPECT_EQ(again->get(), again2->get());
  EXPECT_GE(cache.hits(), 2u);
  // The evicted grammar still serves the request that holds it.
  GrammarMatcher m(*first);
  EXPECT_TRUE(m.AcceptBytes("a0"));
  auto bad = cache.Get(GrammarSpec{GrammarKind::kRegex, "(?=x)"});
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace radixserve::grammar
