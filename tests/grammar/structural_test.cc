// Structural grammars (core/grammar/structural.h) and the matcher's lazy mode: tool calls in the
// markup of Hermes (<tool_call> blocks) and Mistral Nemo ([TOOL_CALLS][...]) constrained to their
// tools' schemas; the free text before a trigger, the trigger split across tokens or inside one
// token with a good or bad tail, a special token that is the trigger; EOS, rollback and fork in
// both phases; markup tokens (special tokens such as <tool_call>, [TOOL_CALLS] taken whole where
// the grammar takes their bytes, and no other special token); every refused spec's message; the
// grammar cache. Most tests use a small synthetic vocabulary whose tokens split the markers at
// awkward places; the last walks a realistic output tokenized by a real 102k tokenizer.
#include "core/grammar/structural.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/compile.h"
#include "core/grammar/grammar_cache.h"
#include "core/grammar/json_schema.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve::grammar {
namespace {

// Special tokens first (their ids are fixed), then every printable ASCII byte and "\n", then
// longer pieces, some of which split "<tool_call>" or carry it with a good or a bad tail.
struct SmallVocab {
  static constexpr int32_t kEos = 0, kBos = 1, kToolCall = 2, kMistralCalls = 3, kImEnd = 4, kUnused = 5;
  std::shared_ptr<const TokenVocab> vocab;
  std::map<std::string, int32_t> id_of;  // matchable tokens by piece

  SmallVocab() : SmallVocab({"</s>", "<s>", "<tool_call>", "[TOOL_CALLS]", "<|im_end|>", ""}, {1, 2, 3, 4, 5}) {}
  // `pieces` (ids 0.., `special` and `eos` among them) before the ordinary pieces.
  SmallVocab(std::vector<std::string> pieces, const std::vector<int32_t>& special,
             const std::vector<int32_t>& eos = {kEos}) {
    for (int c = 0x20; c < 0x7f; ++c) pieces.push_back(std::string(1, static_cast<char>(c)));
    pieces.push_back("\n");
    for (const char* p : {"Sure", " I", "'ll", " check", " the", " weather", ".", "\n\n", "<tool", "tool", "_call",
                          "_ca", "ll>", "<tool_ca", "<tool_cal", "l>", "l>{", "<tool_call>", "<tool_call>\n", "<tool_call>x",
                          "ok<tool_call>", "<<tool_call>\n", "_call>\n", "_call>?", "<tool_call>\n{\"name\": \"",
                          "get_weather", "get_time", "\", \"arguments\": ", "{\"", "city", "\":\"", "Paris", "\",\"",
                          "unit", "tz", "UTC", "\"}", "}\n", "</tool_call>", "\n</", "tool_call>", ", ", "[TOOL_CALLS]",
                          "[TOOL_CALLS][", "[{", "}]", "{\"name\": \"", "}}\n"})
      pieces.push_back(p);
    vocab = TokenVocab::Create(pieces, special, eos);
    for (int32_t id = 0; id < vocab->size(); ++id)
      if (vocab->matchable(id)) id_of.emplace(std::string(vocab->piece(id)), id);
  }
  int32_t Id(const std::string& piece) const {
    auto it = id_of.find(piece);
    EXPECT_NE(it, id_of.end()) << "no token '" << piece << "'";
    return it == id_of.end() ? -1 : it->second;
  }
  // Longest match first: how a tokenizer would spell text the tests do not split by hand.
  std::vector<int32_t> Greedy(std::string_view text) const {
    std::vector<int32_t> out;
    while (!text.empty()) {
      size_t best = 0;
      int32_t id = -1;
      for (const auto& [piece, i] : id_of)
        if (piece.size() > best && text.substr(0, piece.size()) == piece) best = piece.size(), id = i;
      EXPECT_GT(best, 0u) << "cannot spell '" << text << "'";
      if (best == 0) break;
      out.push_back(id);
      text.remove_prefix(best);
    }
    return out;
  }
};

const SmallVocab& Small() {
  static const SmallVocab v;
  return v;
}

constexpr const char* kWeatherSchema =
    R"({"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},)"
    R"("required":["city","unit"],"additionalProperties":false})";
constexpr const char* kTimeSchema =
    R"({"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"],"additionalProperties":false})";

// A Hermes-like spec: <tool_call> blocks of two tools, one a line; `extra` goes into the object.
std::string HermesSpec(const std::string& extra = "") {
  return R"({"calls":[)"
         R"({"begin":"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ","schema":)" +
         std::string(kWeatherSchema) + R"(,"end":"}\n</tool_call>"},)" +
         R"({"begin":"<tool_call>\n{\"name\": \"get_time\", \"arguments\": ","schema":)" + kTimeSchema +
         R"(,"end":"}\n</tool_call>"}],"separator":"\n")" + extra + "}";
}

const std::string kWeatherCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\",\"unit\":\"c\"}}\n</tool_call>";
const std::string kTimeCall = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}\n</tool_call>";

std::shared_ptr<const CompiledGrammar> MustCompile(const std::string& spec,
                                                   std::shared_ptr<const TokenVocab> vocab = Small().vocab) {
  auto g = CompileSpec(GrammarSpec{GrammarKind::kStructural, spec});
  EXPECT_TRUE(g.ok()) << g.status().ToString() << "\n" << spec;
  if (!g.ok()) return nullptr;
  return std::make_shared<const CompiledGrammar>(std::move(g).value(), std::move(vocab));
}

bool Bit(const std::vector<uint32_t>& m, int32_t id) { return (m[id >> 5] >> (id & 31)) & 1; }

std::vector<uint32_t> MaskOf(GrammarMatcher& m) {
  std::vector<uint32_t> mask(m.grammar().vocab().mask_words());
  m.FillNextTokenBitmask(mask.data());
  return mask;
}

// Every token: in the mask iff a fork of the matcher accepts it.
void ExpectMaskIsExact(GrammarMatcher& m, const std::string& where) {
  const TokenVocab& v = m.grammar().vocab();
  const std::vector<uint32_t> mask = MaskOf(m);
  int wrong = 0;
  for (int32_t id = 0; id < v.size(); ++id) {
    GrammarMatcher f = m.Fork();
    const bool takes = f.AcceptToken(id);
    if (takes != Bit(mask, id) && ++wrong <= 5)
      ADD_FAILURE() << where << ": token " << id << " '" << v.piece(id) << "' mask " << Bit(mask, id) << " accept "
                    << takes;
  }
  EXPECT_EQ(wrong, 0) << where;
}

// Feeds the tokens, checking the mask before each; false at the first refused token.
bool Walk(GrammarMatcher& m, const std::vector<int32_t>& ids) {
  std::string seen;
  for (int32_t id : ids) {
    ExpectMaskIsExact(m, "after '" + seen + "'");
    if (!m.AcceptToken(id)) return false;
    seen += m.grammar().vocab().piece(id);
  }
  return true;
}

bool Accepts(const std::string& spec, const std::string& text) {
  auto g = MustCompile(spec);
  GrammarMatcher m(g);
  return m.AcceptBytes(text) && m.CanEnd() && m.AcceptToken(SmallVocab::kEos);
}

// --- The output of a structural grammar (not lazy) ---------------------------------------

TEST(StructuralGrammar, HermesOneCallOrTwoCallsThenEos) {
  auto g = MustCompile(HermesSpec());
  GrammarMatcher m(g, 64);
  ASSERT_TRUE(Walk(m, Small().Greedy(kWeatherCall)));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.MustEnd());  // a second call may follow the separator
  GrammarMatcher two = m.Fork();
  ASSERT_TRUE(Walk(two, Small().Greedy("\n" + kTimeCall)));
  EXPECT_TRUE(two.CanEnd());
  EXPECT_TRUE(two.AcceptToken(SmallVocab::kEos));
  EXPECT_TRUE(two.terminated());
  EXPECT_TRUE(m.AcceptToken(SmallVocab::kEos));
  // Nothing but calls: no text before, none between, none after.
  EXPECT_FALSE(Accepts(HermesSpec(), "Sure" + kWeatherCall));
  EXPECT_FALSE(Accepts(HermesSpec(), kWeatherCall + "\n\n" + kTimeCall));
  EXPECT_FALSE(Accepts(HermesSpec(), kWeatherCall + "."));
  EXPECT_FALSE(Accepts(HermesSpec(), ""));
}

TEST(StructuralGrammar, MaxCallsOneRefusesASecondCall) {
  auto g = MustCompile(HermesSpec(R"(,"max_calls":1)"));
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptBytes(kTimeCall));
  EXPECT_TRUE(m.MustEnd());
  EXPECT_FALSE(m.AcceptBytes("\n"));
  const std::vector<uint32_t> mask = MaskOf(m);
  for (int32_t id = 0; id < Small().vocab->size(); ++id) EXPECT_EQ(Bit(mask, id), id == SmallVocab::kEos) << id;
  EXPECT_TRUE(Accepts(HermesSpec(R"(,"min_calls":2,"max_calls":3)"), kTimeCall + "\n" + kWeatherCall));
  EXPECT_FALSE(Accepts(HermesSpec(R"(,"min_calls":2,"max_calls":3)"), kTimeCall));
  EXPECT_FALSE(Accepts(HermesSpec(R"(,"min_calls":2,"max_calls":3)"),
                       kTimeCall + "\n" + kTimeCall + "\n" + kTimeCall + "\n" + kTimeCall));
}

TEST(StructuralGrammar, MistralNemoPrefixSeparatorSuffix) {
  const std::string spec = R"({"calls":[)"
                           R"({"begin":"{\"name\": \"get_weather\", \"arguments\": ","schema":)" +
                           std::string(kWeatherSchema) + R"(,"end":"}"},)" +
                           R"({"begin":"{\"name\": \"get_time\", \"arguments\": ","schema":)" + kTimeSchema +
                           R"(,"end":"}"}],"prefix":"[TOOL_CALLS][","separator":", ","suffix":"]"})";
  const std::string weather = R"({"name": "get_weather", "arguments": {"city":"Paris","unit":"f"}})";
  const std::string time = R"({"name": "get_time", "arguments": {"tz":"UTC"}})";
  auto g = MustCompile(spec);
  GrammarMatcher m(g, 64);
  EXPECT_EQ(m.ForcedContinuation(), "[TOOL_CALLS][{\"name\": \"get_");
  ASSERT_TRUE(Walk(m, Small().Greedy("[TOOL_CALLS][" + weather + ", " + time)));
  EXPECT_FALSE(m.CanEnd());  // the suffix is missing
  EXPECT_EQ(m.ForcedContinuation(), "");  // "]" or ", "
  ASSERT_TRUE(m.AcceptBytes("]"));
  EXPECT_TRUE(m.MustEnd());
  EXPECT_TRUE(Accepts(spec, "[TOOL_CALLS][" + time + "]"));
  EXPECT_FALSE(Accepts(spec, "[TOOL_CALLS][]"));
  EXPECT_FALSE(Accepts(spec, "[TOOL_CALLS][" + time + "," + time + "]"));
  EXPECT_FALSE(Accepts(spec, "[" + time + "]"));
}

TEST(StructuralGrammar, RequiredPropertiesAndEnumsAreEnforcedInsideACall) {
  const std::string spec = HermesSpec();
  const std::string head = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ";
  EXPECT_TRUE(Accepts(spec, head + R"({"city":"Oslo","unit":"f"})" + "}\n</tool_call>"));
  EXPECT_FALSE(Accepts(spec, head + R"({"city":"Oslo","unit":"k"})" + "}\n</tool_call>"));  // enum
  EXPECT_FALSE(Accepts(spec, head + R"({"city":"Oslo"})" + "}\n</tool_call>"));             // required
  EXPECT_FALSE(Accepts(spec, head + R"({"unit":"c","city":"Oslo"})" + "}\n</tool_call>"));  // schema order
  EXPECT_FALSE(Accepts(spec, head + R"({"city":"Oslo","unit":"c","x":1})" + "}\n</tool_call>"));
  EXPECT_FALSE(Accepts(spec, head + R"({"tz":"UTC"})" + "}\n</tool_call>"));  // the other tool's arguments
  EXPECT_FALSE(Accepts(spec, "<tool_call>\n{\"name\": \"get_date\", \"arguments\": {}}\n</tool_call>"));
  // Whitespace inside the arguments only where max_whitespace allows it.
  const std::string spaced = head + R"({ "city": "Oslo", "unit": "c" })" + "}\n</tool_call>";
  EXPECT_FALSE(Accepts(spec, spaced));
  EXPECT_TRUE(Accepts(HermesSpec(R"(,"max_whitespace":1)"), spaced));
  // At the enum, the mask allows only the listed values' tokens.
  auto g = MustCompile(spec);
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptBytes(head + R"({"city":"Oslo","unit":")"));
  const std::vector<uint32_t> mask = MaskOf(m);
  for (int32_t id = 0; id < Small().vocab->size(); ++id)
    EXPECT_EQ(Bit(mask, id), id == Small().Id("c") || id == Small().Id("f")) << Small().vocab->piece(id);
}

TEST(StructuralGrammar, MinCallsZeroAllowsAnEmptyOutputOnly) {
  const std::string spec = R"({"calls":[{"begin":"<f>","schema":{"type":"integer"},"end":"</f>"}],)"
                           R"("prefix":"[","separator":",","suffix":"]","min_calls":0})";
  EXPECT_TRUE(Accepts(spec, ""));
  EXPECT_TRUE(Accepts(spec, "[<f>1</f>]"));
  EXPECT_TRUE(Accepts(spec, "[<f>1</f>,<f>-20</f>]"));
  EXPECT_FALSE(Accepts(spec, "[]"));
  EXPECT_FALSE(Accepts(spec, "[<f>1.0</f>]"));  // integers written plainly, as for json_schema
}

TEST(StructuralGrammar, ACallWithoutASchemaTakesAnyObjectAndSharedSchemasCompileOnce) {
  const std::string spec = R"({"calls":[{"begin":"<a>","end":"</a>"}]})";
  EXPECT_TRUE(Accepts(spec, R"(<a>{"x":[1,{"y":null}]}</a>)"));
  EXPECT_FALSE(Accepts(spec, "<a>[1]</a>"));
  EXPECT_FALSE(Accepts(spec, "<a>\"s\"</a>"));
  // A second call of the same schema adds its markup, not a second copy of the schema.
  auto one = CompileStructural(std::string(R"({"calls":[{"begin":"<a>","schema":)") + kWeatherSchema + "}]}");
  auto two = CompileStructural(std::string(R"({"calls":[{"begin":"<a>","schema":)") + kWeatherSchema +
                               R"(},{"begin":"<b>","schema":)" + kWeatherSchema + "}]}");
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_LE(two->symbol_count(), one->symbol_count() + 8);
}

TEST(StructuralGrammar, EmbedCopiesAGrammarUnderFreshNames) {
  GrammarBuilder inner;
  const uint32_t digit = inner.NewRule("digit");
  inner.AddAlternative(digit, {inner.Bytes(ByteSet::Range('0', '9'))});
  const uint32_t root = inner.NewRule("num");
  inner.AddAlternative(root, {inner.Plus({Symbol::Rule(digit)})});
  auto g = inner.Finish(root);
  ASSERT_TRUE(g.ok());
  GrammarBuilder outer;
  const uint32_t top = outer.NewRule("pair");
  Sequence seq = {outer.Embed(*g), outer.Byte('+'), outer.Embed(*g)};
  outer.AddAlternative(top, seq);
  auto pair = outer.Finish(top);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto vocab = Small().vocab;
  auto cg = std::make_shared<const CompiledGrammar>(std::move(pair).value(), vocab);
  GrammarMatcher m(cg);
  EXPECT_TRUE(m.AcceptBytes("12+345"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.AcceptBytes("+"));
  std::set<std::string> names;
  for (const Rule& r : cg->grammar().rules()) EXPECT_TRUE(names.insert(r.name).second) << r.name;
}

// --- Lazy mode ----------------------------------------------------------------------------

TEST(LazyStructuralGrammar, FreeTextThenTheTriggerThenACallThenOnlyEos) {
  auto g = MustCompile(HermesSpec(R"(,"max_calls":1,"trigger":"<tool_call>")"));
  ASSERT_TRUE(g->grammar().lazy());
  GrammarMatcher m(g, 64);
  EXPECT_TRUE(m.dormant());
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.MustEnd());
  EXPECT_EQ(m.ForcedContinuation(), "");
  // Dormant: every token with a piece, special ones included, and EOS; not the empty one.
  const std::vector<uint32_t> free = MaskOf(m);
  for (int32_t id = 0; id < Small().vocab->size(); ++id) {
    const std::string_view piece = Small().vocab->piece(id);
    const bool refused = id == SmallVocab::kUnused || piece == "<tool_call>x";
    EXPECT_EQ(Bit(free, id), !refused) << "'" << piece << "'";
  }
  ASSERT_TRUE(Walk(m, Small().Greedy("Sure. I'll check the weather.\n\n")));
  EXPECT_TRUE(m.dormant());
  ASSERT_TRUE(Walk(m, Small().Greedy(kWeatherCall)));
  EXPECT_FALSE(m.dormant());
  EXPECT_TRUE(m.MustEnd());
  const std::vector<uint32_t> end = MaskOf(m);
  for (int32_t id = 0; id < Small().vocab->size(); ++id) EXPECT_EQ(Bit(end, id), id == SmallVocab::kEos) << id;
  EXPECT_TRUE(m.AcceptToken(SmallVocab::kEos));
  EXPECT_TRUE(m.terminated());
}

TEST(LazyStructuralGrammar, OnceActiveTheRestMustBeCalls) {
  const std::string spec = HermesSpec(R"(,"trigger":"<tool_call>")");
  EXPECT_TRUE(Accepts(spec, "Sure." + kWeatherCall + "\n" + kTimeCall));
  EXPECT_TRUE(Accepts(spec, "no call at all"));
  EXPECT_TRUE(Accepts(spec, ""));
  EXPECT_FALSE(Accepts(spec, "Sure." + kWeatherCall + " done"));
  EXPECT_FALSE(Accepts(spec, "Sure.<tool_call>\n{\"name\": \"get_date\""));
  EXPECT_FALSE(Accepts(spec, "Sure.<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"));
  // Activated but unfinished: EOS is refused.
  auto g = MustCompile(spec);
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptBytes("Sure.<tool_c"));
  EXPECT_TRUE(m.dormant());
  ASSERT_TRUE(m.AcceptBytes("all>\n"));
  EXPECT_FALSE(m.dormant());
  EXPECT_FALSE(m.CanEnd());
  EXPECT_FALSE(m.AcceptToken(SmallVocab::kEos));
  EXPECT_EQ(m.ForcedContinuation(), "{\"name\": \"get_");
}

TEST(LazyStructuralGrammar, TriggerSplitAcrossTwoOrThreeTokens) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  const SmallVocab& v = Small();
  const std::vector<std::vector<std::string>> splits = {
      {"<tool", "_call>\n"},             // two tokens, the second with a good tail
      {"<tool_ca", "ll>", "\n"},          // two tokens, then the tail
      {"<tool", "_ca", "ll>", "\n"},      // three tokens
      {"<", "tool", "_call", ">", "\n"},  // byte-ish pieces
      {"<tool", "<tool_call>\n"},         // a false start, then the whole trigger in one token
      {"<", "<tool_call>\n"},
  };
  for (const auto& split : splits) {
    GrammarMatcher m(g, 64);
    std::vector<int32_t> ids = v.Greedy("Sure. ");
    for (const std::string& p : split) ids.push_back(v.Id(p));
    ASSERT_TRUE(Walk(m, ids)) << split[0] << " " << split[1];
    EXPECT_FALSE(m.dormant()) << split[0] << " " << split[1];
    ASSERT_TRUE(Walk(m, v.Greedy("{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}\n</tool_call>")));
    EXPECT_TRUE(m.CanEnd());
  }
}

TEST(LazyStructuralGrammar, ATokenThatCompletesTheTriggerIsMaskedOutWhenItsTailIsRefused) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  const SmallVocab& v = Small();
  GrammarMatcher m(g, 64);
  std::vector<uint32_t> mask = MaskOf(m);
  EXPECT_TRUE(Bit(mask, v.Id("<tool_call>\n")));       // good tail
  EXPECT_TRUE(Bit(mask, v.Id("ok<tool_call>")));       // free text, then the trigger alone
  EXPECT_TRUE(Bit(mask, v.Id("<<tool_call>\n")));
  EXPECT_TRUE(Bit(mask, v.Id("<tool_call>\n{\"name\": \"")));
  EXPECT_FALSE(Bit(mask, v.Id("<tool_call>x")));       // bad tail
  EXPECT_FALSE(m.Fork().AcceptToken(v.Id("<tool_call>x")));
  EXPECT_TRUE(Bit(mask, v.Id("_call>?")));             // no trigger without "<tool" before it
  // After "<tool" the completing tokens are judged by what follows the trigger.
  ASSERT_TRUE(m.AcceptToken(v.Id("<tool")));
  mask = MaskOf(m);
  EXPECT_TRUE(Bit(mask, v.Id("_call>\n")));
  EXPECT_FALSE(Bit(mask, v.Id("_call>?")));
  EXPECT_TRUE(Bit(mask, v.Id("_call")));
  EXPECT_TRUE(Bit(mask, v.Id("Sure")));
  EXPECT_FALSE(Bit(mask, v.Id("<tool_call>x")));
  ExpectMaskIsExact(m, "after <tool");
  ASSERT_TRUE(m.AcceptToken(v.Id("_ca")));
  ASSERT_TRUE(m.AcceptToken(v.Id("l")));
  mask = MaskOf(m);
  EXPECT_TRUE(Bit(mask, v.Id("l>")));
  EXPECT_FALSE(Bit(mask, v.Id("l>{")));  // the call starts with "\n", not "{"
  ExpectMaskIsExact(m, "after <tool_cal");
  // Accepting "ok<tool_call>" activates with "ok" as free text.
  GrammarMatcher k(g);
  ASSERT_TRUE(k.AcceptToken(v.Id("ok<tool_call>")));
  EXPECT_FALSE(k.dormant());
  EXPECT_EQ(k.ForcedContinuation(), "\n{\"name\": \"get_");
}

TEST(LazyStructuralGrammar, SpecialTokensWhileDormantAndAfterwards) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  const SmallVocab& v = Small();
  GrammarMatcher m(g, 64);
  // Free text may hold special tokens (as an unconstrained request's), not an empty one.
  ASSERT_TRUE(m.AcceptToken(SmallVocab::kImEnd));
  EXPECT_TRUE(m.dormant());
  EXPECT_FALSE(m.Fork().AcceptToken(SmallVocab::kUnused));
  EXPECT_FALSE(m.Fork().AcceptToken(Small().vocab->size()));  // past the vocabulary (a model's padding)
  EXPECT_FALSE(m.Fork().AcceptToken(-1));
  // The special token whose piece is the trigger activates the grammar.
  ASSERT_TRUE(Walk(m, {SmallVocab::kToolCall}));
  EXPECT_FALSE(m.dormant());
  ExpectMaskIsExact(m, "after the special <tool_call>");
  // Once active, special tokens are refused as in any grammar.
  const std::vector<uint32_t> mask = MaskOf(m);
  EXPECT_FALSE(Bit(mask, SmallVocab::kImEnd));
  EXPECT_FALSE(m.Fork().AcceptToken(SmallVocab::kImEnd));
  ASSERT_TRUE(Walk(m, v.Greedy("\n{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}\n</tool_call>")));
  // A second call: the special <tool_call> is one of the grammar's markup tokens, taken where
  // its bytes fit (after the separator), not before.
  EXPECT_FALSE(m.Fork().AcceptToken(SmallVocab::kToolCall));
  GrammarMatcher second = m.Fork();
  ASSERT_TRUE(Walk(second, {v.Id("\n"), SmallVocab::kToolCall}));
  EXPECT_EQ(second.ForcedContinuation(), "\n{\"name\": \"get_");
  EXPECT_TRUE(m.AcceptToken(SmallVocab::kEos));

  // Mistral: the control token [TOOL_CALLS] is the trigger and the start of the prefix.
  const std::string mistral = R"({"calls":[{"begin":"{\"name\": \"get_time\", \"arguments\": ","schema":)" +
                              std::string(kTimeSchema) +
                              R"(,"end":"}"}],"prefix":"[TOOL_CALLS][","separator":", ","suffix":"]",)"
                              R"("trigger":"[TOOL_CALLS]"})";
  auto mg = MustCompile(mistral);
  GrammarMatcher n(mg, 64);
  ASSERT_TRUE(Walk(n, {SmallVocab::kMistralCalls}));
  EXPECT_EQ(n.ForcedContinuation(), "[{\"name\": \"get_time\", \"arguments\": {\"tz\":\"");
  ASSERT_TRUE(Walk(n, v.Greedy("[{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}]")));
  EXPECT_TRUE(n.MustEnd());
}

TEST(LazyStructuralGrammar, EosWhileDormantEndsTheMatcher) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptBytes("Sunny in Paris.<tool"));  // a partial trigger is still free text
  EXPECT_TRUE(m.CanEnd());
  ASSERT_TRUE(m.AcceptToken(SmallVocab::kEos));
  EXPECT_TRUE(m.terminated());
  EXPECT_TRUE(m.MustEnd());
  EXPECT_FALSE(m.CanEnd());
  for (uint32_t w : MaskOf(m)) EXPECT_EQ(w, 0u);
  EXPECT_FALSE(m.AcceptToken(Small().Id("Sure")));
  EXPECT_FALSE(m.AcceptBytes("x"));
  ASSERT_TRUE(m.Rollback(1).ok());  // the EOS undone: dormant again
  EXPECT_TRUE(m.dormant());
  EXPECT_TRUE(m.AcceptToken(Small().Id("_call>\n")));
  EXPECT_FALSE(m.dormant());
}

// What the worker's overlap loop does: roll back across the activation and replay the same
// tokens; every step's phase and mask come back the same.
TEST(LazyStructuralGrammar, RollbackAcrossTheActivationThenReplay) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  const SmallVocab& v = Small();
  std::vector<int32_t> ids = v.Greedy("Sure. ");
  for (const char* p : {"<tool", "_ca", "ll>", "\n", "{\"name\": \"", "get_time"}) ids.push_back(v.Id(p));
  GrammarMatcher m(g, 32);
  struct Step {
    bool dormant;
    std::vector<uint32_t> mask;
  };
  std::vector<Step> first;
  for (int32_t id : ids) {
    first.push_back({m.dormant(), MaskOf(m)});
    ASSERT_TRUE(m.AcceptToken(id));
  }
  first.push_back({m.dormant(), MaskOf(m)});
  for (int k : {1, 4, 5, 7, static_cast<int>(ids.size())}) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(m.Rollback(k).ok());
    const size_t at = ids.size() - k;
    EXPECT_EQ(m.dormant(), first[at].dormant);
    EXPECT_EQ(MaskOf(m), first[at].mask);
    for (size_t i = at; i < ids.size(); ++i) {
      ASSERT_TRUE(m.AcceptToken(ids[i]));
      EXPECT_EQ(m.dormant(), first[i + 1].dormant);
      EXPECT_EQ(MaskOf(m), first[i + 1].mask);
    }
  }
  EXPECT_FALSE(m.Rollback(33).ok());
}

TEST(LazyStructuralGrammar, ForksAreIndependentInBothPhases) {
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"));
  const SmallVocab& v = Small();
  GrammarMatcher m(g);
  ASSERT_TRUE(m.AcceptToken(v.Id("<tool")));
  GrammarMatcher f = m.Fork();
  EXPECT_TRUE(f.dormant());
  ASSERT_TRUE(f.AcceptToken(v.Id("_call>\n")));  // the fork finds the trigger split with m's bytes
  EXPECT_FALSE(f.dormant());
  EXPECT_TRUE(m.dormant());
  ASSERT_TRUE(m.AcceptToken(v.Id("Sure")));  // m goes on as free text
  EXPECT_TRUE(m.dormant());
  EXPECT_FALSE(f.CanEnd());
  GrammarMatcher ff = f.Fork();
  ASSERT_TRUE(ff.AcceptBytes(R"({"name": "get_time", "arguments": {"tz":"UTC"}})" "\n</tool_call>"));
  EXPECT_TRUE(ff.CanEnd());
  EXPECT_FALSE(f.CanEnd());
  EXPECT_EQ(f.ForcedContinuation(), "{\"name\": \"get_");
}

// --- Markup tokens: special tokens the markup is written with ------------------------------

// A vocabulary whose markers are special tokens, as Qwen's <tool_call> / </tool_call> (user
// defined) and Mistral's [TOOL_CALLS] / [ARGS] (control): the ordinary pieces of SmallVocab can
// spell them too (one byte at a time, "<tool", "_call", and an ordinary "<tool_call>" piece).
struct MarkupIds {
  static constexpr int32_t kEos = 0, kImStart = 1, kImEnd = 2, kToolCall = 3, kToolCallEnd = 4, kToolCalls = 5,
                           kArgs = 6, kUnused = 7, kSpecialCount = 8;
};

const SmallVocab& Markup() {
  static const SmallVocab v(
      {"</s>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "[ARGS]", ""},
      {1, 2, 3, 4, 5, 6, 7});
  return v;
}

// The special tokens (EOS aside) the mask allows.
std::vector<int32_t> AllowedSpecials(GrammarMatcher& m) {
  const std::vector<uint32_t> mask = MaskOf(m);
  std::vector<int32_t> out;
  for (int32_t id = 1; id < MarkupIds::kSpecialCount; ++id)
    if (Bit(mask, id)) out.push_back(id);
  return out;
}

// Mistral v11 and later: every call is [TOOL_CALLS]name[ARGS]{arguments}, both markers control tokens.
std::string MistralSpec(const std::string& extra = "") {
  return R"({"calls":[{"begin":"[TOOL_CALLS]get_time[ARGS]","schema":)" + std::string(kTimeSchema) +
         R"(},{"begin":"[TOOL_CALLS]get_weather[ARGS]","schema":)" + kWeatherSchema + "}]" + extra + "}";
}

TEST(MarkupTokens, HermesTakesTheSpecialMarkersExactlyWhereTheirBytesGo) {
  using I = MarkupIds;
  const SmallVocab& v = Markup();
  auto g = MustCompile(HermesSpec(), v.vocab);
  EXPECT_EQ(g->markup_tokens(), (std::vector<int32_t>{I::kToolCall, I::kToolCallEnd}));
  GrammarMatcher m(g, 64);
  // The start: the special <tool_call> and every ordinary way to spell it; no other special token.
  std::vector<uint32_t> mask = MaskOf(m);
  EXPECT_TRUE(Bit(mask, I::kToolCall));
  EXPECT_TRUE(Bit(mask, v.Id("<")));
  EXPECT_TRUE(Bit(mask, v.Id("<tool")));
  EXPECT_TRUE(Bit(mask, v.Id("<tool_call>")));
  EXPECT_EQ(AllowedSpecials(m), std::vector<int32_t>{I::kToolCall});
  ExpectMaskIsExact(m, "at the start");
  // After the special token the grammar is where the bytes would have put it.
  GrammarMatcher by_bytes(g);
  ASSERT_TRUE(by_bytes.AcceptBytes("<tool_call>"));
  ASSERT_TRUE(m.AcceptToken(I::kToolCall));
  EXPECT_EQ(m.ForcedContinuation(), "\n{\"name\": \"get_");
  EXPECT_EQ(MaskOf(m), MaskOf(by_bytes));
  // The call, token by token: the special </tool_call> is allowed where the grammar takes its
  // bytes, and no special token outside the markup ever is.
  std::string seen = "<tool_call>";
  std::vector<std::string> closing_at;  // where the special </tool_call> was allowed
  for (int32_t id : v.Greedy("\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\",\"unit\":\"c\"}}\n")) {
    ExpectMaskIsExact(m, "after '" + seen + "'");
    const std::vector<int32_t> specials = AllowedSpecials(m);
    GrammarMatcher probe = m.Fork();
    const bool bytes_fit = probe.AcceptBytes("</tool_call>");
    EXPECT_EQ(std::count(specials.begin(), specials.end(), I::kToolCallEnd) == 1, bytes_fit) << seen;
    for (int32_t s : specials) EXPECT_TRUE(s == I::kToolCall || s == I::kToolCallEnd) << s << " after " << seen;
    if (bytes_fit) closing_at.push_back(seen);
    ASSERT_TRUE(m.AcceptToken(id)) << seen;
    seen += v.vocab->piece(id);
  }
  // Only inside the string value "Paris" (at its start and after it), where the marker's bytes
  // are string characters: there the special tokens are allowed as their ordinary spellings are.
  const std::string head = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"";
  EXPECT_EQ(closing_at, (std::vector<std::string>{head, head + "Paris"}));
  GrammarMatcher in_string(g);
  ASSERT_TRUE(in_string.AcceptBytes("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Pa"));
  EXPECT_EQ(AllowedSpecials(in_string), (std::vector<int32_t>{I::kToolCall, I::kToolCallEnd}));
  // After "}\n": </tool_call>, special or spelled; the forced bytes match the special token's piece.
  EXPECT_EQ(m.ForcedContinuation(), "</tool_call>");
  EXPECT_EQ(AllowedSpecials(m), std::vector<int32_t>{I::kToolCallEnd});
  ExpectMaskIsExact(m, "before </tool_call>");
  ASSERT_TRUE(m.AcceptToken(I::kToolCallEnd));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.MustEnd());
  EXPECT_TRUE(AllowedSpecials(m).empty());  // "\n" first
  ExpectMaskIsExact(m, "after the first call");
  // A second call opened by the special token and closed by the ordinary piece.
  std::vector<int32_t> second = {v.Id("\n"), I::kToolCall};
  for (int32_t id : v.Greedy("\n{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}\n")) second.push_back(id);
  second.push_back(v.Id("</tool_call>"));
  ASSERT_TRUE(Walk(m, second));
  EXPECT_TRUE(m.CanEnd());
  ExpectMaskIsExact(m, "at the end");
  EXPECT_TRUE(m.AcceptToken(I::kEos));
  // Special tokens outside the markup are refused even where their bytes would fit.
  GrammarMatcher other(g);
  ASSERT_TRUE(other.AcceptBytes("<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\":\""));
  EXPECT_TRUE(other.Fork().AcceptBytes("<|im_start|>"));
  EXPECT_FALSE(other.Fork().AcceptToken(I::kImStart));
  EXPECT_FALSE(other.Fork().AcceptToken(I::kToolCalls));
  EXPECT_FALSE(other.Fork().AcceptToken(I::kUnused));
}

TEST(MarkupTokens, MistralControlTokensRequiredAndLazy) {
  using I = MarkupIds;
  const SmallVocab& v = Markup();
  // Required: from the first token.
  auto g = MustCompile(MistralSpec(), v.vocab);
  EXPECT_EQ(g->markup_tokens(), (std::vector<int32_t>{I::kToolCalls, I::kArgs}));
  const std::string text = "[TOOL_CALLS]get_time[ARGS]{\"tz\":\"UTC\"}[TOOL_CALLS]get_weather[ARGS]"
                           "{\"city\":\"Paris\",\"unit\":\"f\"}";
  {
    GrammarMatcher m(g, 64);
    EXPECT_EQ(AllowedSpecials(m), std::vector<int32_t>{I::kToolCalls});
    EXPECT_TRUE(Bit(MaskOf(m), v.Id("[")));
    EXPECT_TRUE(Bit(MaskOf(m), v.Id("[TOOL_CALLS]")));  // the ordinary spelling
    std::vector<int32_t> ids = {I::kToolCalls};
    for (int32_t id : v.Greedy("get_time")) ids.push_back(id);
    ids.push_back(I::kArgs);
    for (int32_t id : v.Greedy("{\"tz\":\"UTC\"}")) ids.push_back(id);
    ids.push_back(I::kToolCalls);
    for (int32_t id : v.Greedy("get_weather")) ids.push_back(id);
    ids.push_back(I::kArgs);
    for (int32_t id : v.Greedy("{\"city\":\"Paris\",\"unit\":\"f\"}")) ids.push_back(id);
    ASSERT_TRUE(Walk(m, ids));
    std::string out;
    for (int32_t id : ids) out += v.vocab->piece(id);
    EXPECT_EQ(out, text);
    EXPECT_TRUE(m.CanEnd());
    EXPECT_EQ(AllowedSpecials(m), std::vector<int32_t>{I::kToolCalls});  // a third call may follow
    ExpectMaskIsExact(m, "at the end");
    EXPECT_TRUE(m.AcceptToken(I::kEos));
    // [ARGS] only right after the name: not in place of it.
    GrammarMatcher n(g);
    ASSERT_TRUE(n.AcceptToken(I::kToolCalls));
    EXPECT_TRUE(AllowedSpecials(n).empty());
    EXPECT_FALSE(n.Fork().AcceptToken(I::kArgs));
    ASSERT_TRUE(n.AcceptBytes("get_tim"));
    EXPECT_FALSE(n.Fork().AcceptToken(I::kArgs));
    ASSERT_TRUE(n.AcceptBytes("e"));
    EXPECT_EQ(AllowedSpecials(n), std::vector<int32_t>{I::kArgs});
  }
  // Lazy: free text, the control token triggers, and the second call's control token is taken
  // in the active phase.
  auto lazy = MustCompile(MistralSpec(R"(,"trigger":"[TOOL_CALLS]")"), v.vocab);
  EXPECT_EQ(lazy->markup_tokens(), (std::vector<int32_t>{I::kToolCalls, I::kArgs}));
  for (bool special_trigger : {true, false}) {
    SCOPED_TRACE(special_trigger);
    GrammarMatcher m(lazy, 64);
    std::vector<int32_t> ids = v.Greedy("Sure. I'll check.");
    if (special_trigger) {
      ids.push_back(I::kToolCalls);
    } else {
      ids.push_back(v.Id("[TOOL_CALLS]"));  // the ordinary piece triggers too
    }
    ASSERT_TRUE(Walk(m, ids));
    EXPECT_FALSE(m.dormant());
    EXPECT_EQ(AllowedSpecials(m), std::vector<int32_t>{});
    std::vector<int32_t> rest = v.Greedy("get_time");
    rest.push_back(I::kArgs);
    for (int32_t id : v.Greedy("{\"tz\":\"UTC\"}")) rest.push_back(id);
    rest.push_back(I::kToolCalls);
    for (int32_t id : v.Greedy("get_weather[ARGS]{\"city\":\"Paris\",\"unit\":\"c\"}")) rest.push_back(id);
    ASSERT_TRUE(Walk(m, rest));
    EXPECT_TRUE(m.CanEnd());
    EXPECT_TRUE(m.AcceptToken(I::kEos));
  }
  // While dormant every special token with a piece is free text, as before; once active, only
  // the markup's.
  GrammarMatcher d(lazy);
  EXPECT_EQ(AllowedSpecials(d), (std::vector<int32_t>{I::kImStart, I::kImEnd, I::kToolCall, I::kToolCallEnd,
                                                      I::kToolCalls, I::kArgs}));
  ASSERT_TRUE(d.AcceptToken(I::kImEnd));
  ASSERT_TRUE(d.AcceptToken(I::kToolCalls));
  EXPECT_FALSE(d.Fork().AcceptToken(I::kImEnd));
  EXPECT_FALSE(d.Fork().AcceptToken(I::kToolCall));
  // The Nemo form: [TOOL_CALLS] starts the prefix "[TOOL_CALLS][".
  const std::string nemo = R"({"calls":[{"begin":"{\"name\": \"get_time\", \"arguments\": ","schema":)" +
                           std::string(kTimeSchema) + R"(,"end":"}"}],"prefix":"[TOOL_CALLS][","separator":", ",)"
                           R"("suffix":"]"})";
  auto ng = MustCompile(nemo, v.vocab);
  EXPECT_EQ(ng->markup_tokens(), std::vector<int32_t>{I::kToolCalls});
  GrammarMatcher n(ng, 64);
  std::vector<int32_t> ids = {I::kToolCalls};
  for (int32_t id : v.Greedy("[{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}]")) ids.push_back(id);
  ASSERT_TRUE(Walk(n, ids));
  EXPECT_TRUE(n.MustEnd());
}

TEST(MarkupTokens, OtherGrammarKindsNeverTakeASpecialToken) {
  using I = MarkupIds;
  const SmallVocab& v = Markup();
  struct Case {
    GrammarKind kind;
    std::string text, output;
  };
  const std::vector<Case> cases = {
      {GrammarKind::kJsonSchema, R"({"type":"object","properties":{"s":{"type":"string"}},"required":["s"]})",
       "{\"s\":\"<tool_call>[TOOL_CALLS]</tool_call>\"}"},
      {GrammarKind::kJsonObject, "", "{\"<tool_call>\":\"[ARGS]\"}"},
      {GrammarKind::kRegex, "<tool_call>[a-z_]*</tool_call>", "<tool_call>get_time</tool_call>"},
      {GrammarKind::kGbnf, R"(root ::= "<tool_call>" [a-z_]* "</tool_call>")", "<tool_call>get_time</tool_call>"},
      {GrammarKind::kChoice, R"(["<tool_call>", "[TOOL_CALLS]"])", "[TOOL_CALLS]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto g = CompileSpec(GrammarSpec{c.kind, c.text});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_TRUE(g->markup_texts().empty());
    auto cg = std::make_shared<const CompiledGrammar>(std::move(g).value(), v.vocab);
    EXPECT_TRUE(cg->markup_tokens().empty());
    GrammarMatcher m(cg);
    // Spelled one byte at a time, so that every position inside the markers is met.
    std::string seen;
    for (char ch : c.output) {
      ExpectMaskIsExact(m, "after '" + seen + "'");
      EXPECT_TRUE(AllowedSpecials(m).empty()) << seen;
      for (int32_t s = 1; s < I::kSpecialCount; ++s) EXPECT_FALSE(m.Fork().AcceptToken(s)) << s << " " << seen;
      ASSERT_TRUE(m.AcceptToken(v.Id(std::string(1, ch)))) << seen;
      seen.push_back(ch);
    }
    EXPECT_TRUE(m.AcceptToken(I::kEos));
  }
}

// What the worker's overlap loop does: roll back across accepted markup tokens and replay.
TEST(MarkupTokens, RollbackAndForkAcrossAMarkupToken) {
  using I = MarkupIds;
  const SmallVocab& v = Markup();
  auto g = MustCompile(HermesSpec(), v.vocab);
  std::vector<int32_t> ids = {I::kToolCall};
  for (int32_t id : v.Greedy("\n{\"name\": \"get_time\", \"arguments\": {\"tz\":\"UTC\"}}\n")) ids.push_back(id);
  ids.push_back(I::kToolCallEnd);
  ids.push_back(v.Id("\n"));
  ids.push_back(I::kToolCall);
  ids.push_back(v.Id("\n"));
  GrammarMatcher m(g, 64);
  std::vector<std::vector<uint32_t>> masks;
  std::vector<std::string> forced;
  for (int32_t id : ids) {
    masks.push_back(MaskOf(m));
    forced.push_back(m.ForcedContinuation());
    ASSERT_TRUE(m.AcceptToken(id));
  }
  masks.push_back(MaskOf(m));
  forced.push_back(m.ForcedContinuation());
  const int n = static_cast<int>(ids.size());
  for (int k : {1, 2, 3, 4, n - 1, n}) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(m.Rollback(k).ok());
    const size_t at = ids.size() - k;
    EXPECT_EQ(MaskOf(m), masks[at]);
    EXPECT_EQ(m.ForcedContinuation(), forced[at]);
    for (size_t i = at; i < ids.size(); ++i) {
      ASSERT_TRUE(m.AcceptToken(ids[i]));
      EXPECT_EQ(MaskOf(m), masks[i + 1]);
      EXPECT_EQ(m.ForcedContinuation(), forced[i + 1]);
    }
  }
  // Rolled back to just before the closing marker: a fork takes the special token, the
  // original the ordinary spelling; both end up in the same place.
  ASSERT_TRUE(m.Rollback(4).ok());
  GrammarMatcher f = m.Fork();
  ASSERT_TRUE(f.AcceptToken(I::kToolCallEnd));
  ASSERT_TRUE(m.AcceptToken(v.Id("</tool_call>")));
  EXPECT_EQ(MaskOf(f), MaskOf(m));
  EXPECT_TRUE(f.CanEnd() && m.CanEnd());
  ASSERT_TRUE(f.Rollback(1).ok());
  EXPECT_EQ(f.ForcedContinuation(), "</tool_call>");
  EXPECT_TRUE(m.CanEnd());
}

// A markup token may close the JSON value before the markup proper starts ("}}}" lies within
// the end "}}}</f>", but its braces can close the arguments' inner objects): from deep inside the
// value such a token pops past what a context sees, so the mask walks it from the whole state.
TEST(MarkupTokens, ATokenThatLeavesTheValueIsJudgedOnTheWholeState) {
  const SmallVocab v({"</s>", "}}}", "}}}</f>", "\"}}", "</f>"}, {1, 2, 3, 4});
  const std::string spec =
      R"({"calls":[{"begin":"<f>{\"a\": {\"call\": {\"args\": ","schema":{"type":"object","properties":{)"
      R"("o":{"type":"object","properties":{"p":{"type":"object","properties":{"m":{"type":"integer"}},)"
      R"("required":["m"],"additionalProperties":false}},"required":["p"],"additionalProperties":false}},)"
      R"("required":["o"],"additionalProperties":false},"end":"}}}</f>"}],"min_calls":2,"max_calls":2})";
  auto g = MustCompile(spec, v.vocab);
  EXPECT_EQ(g->markup_tokens(), (std::vector<int32_t>{1, 2, 4}));  // not "\"}}"
  const std::string call = R"(<f>{"a": {"call": {"args": {"o":{"p":{"m":12}}}}}}</f>)";
  GrammarMatcher m(g, 64);
  std::string seen;
  std::map<std::string, std::vector<int32_t>> allowed;  // special tokens allowed, by position
  for (char ch : call + call) {
    ExpectMaskIsExact(m, "after '" + seen + "'");
    const std::vector<uint32_t> mask = MaskOf(m);
    for (int32_t id = 1; id <= 4; ++id)
      if (Bit(mask, id)) allowed[seen].push_back(id);
    ASSERT_TRUE(m.AcceptToken(v.Id(std::string(1, ch)))) << seen;
    seen.push_back(ch);
  }
  EXPECT_TRUE(m.MustEnd());
  const std::string head = R"(<f>{"a": {"call": {"args": {"o":{"p":{"m":1)";
  EXPECT_EQ(allowed[head], std::vector<int32_t>{1});            // "}}}": p, o and args closed
  EXPECT_EQ(allowed[head + "2"], std::vector<int32_t>{1});
  EXPECT_EQ(allowed[head + "2}"], std::vector<int32_t>{1});     // o, args, then the end's first
  EXPECT_EQ(allowed[head + "2}}"], std::vector<int32_t>{1});
  EXPECT_EQ(allowed[head + "2}}}"], (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(allowed[head + "2}}}}"], std::vector<int32_t>{});
  EXPECT_EQ(allowed[head + "2}}}}}"], std::vector<int32_t>{});
  EXPECT_EQ(allowed[head + "2}}}}}}"], std::vector<int32_t>{4});
  // Taking the specials from deep inside: the same output as the bytes.
  GrammarMatcher k(g, 64);
  ASSERT_TRUE(k.AcceptBytes(head + "2"));
  ASSERT_TRUE(Walk(k, {1, 2}));
  EXPECT_FALSE(k.MustEnd());
  ASSERT_TRUE(k.AcceptBytes(head + "2"));
  ASSERT_TRUE(Walk(k, {v.Id("}"), 1, v.Id("}"), v.Id("}"), 4}));
  EXPECT_TRUE(k.MustEnd());
}

// gpt-oss: <|channel|>, <|constrain|> and <|message|> are special tokens, and <|call|>, which
// ends a call, ends the turn too (an end-of-generation token, as <|return|>): it is allowed where
// its bytes complete the grammar, and taking it ends the matcher there.
TEST(MarkupTokens, GptOssCallIsAnEndOfGenerationTokenWrittenAsMarkup) {
  enum : int32_t { kReturn = 0, kCall, kChannel, kConstrain, kMessage, kStart, kEnd };
  const SmallVocab v({"<|return|>", "<|call|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|start|>", "<|end|>"},
                     {kChannel, kConstrain, kMessage, kStart}, {kReturn, kCall, kEnd});
  auto specials = [](GrammarMatcher& m) {
    const std::vector<uint32_t> mask = MaskOf(m);
    std::vector<int32_t> out;
    for (int32_t id = kReturn; id <= kEnd; ++id)
      if (Bit(mask, id)) out.push_back(id);
    return out;
  };
  const std::string calls = R"({"calls":[{"begin":"to=functions.get_time <|constrain|>json<|message|>","schema":)" +
                            std::string(kTimeSchema) + R"(,"end":"<|call|>"}],"max_calls":1)";
  auto g = MustCompile(calls + R"(,"prefix":"<|channel|>commentary "})", v.vocab);
  EXPECT_EQ(g->markup_tokens(), (std::vector<int32_t>{kChannel, kConstrain, kMessage}));
  EXPECT_EQ(g->markup_eos(), std::vector<int32_t>{kCall});
  GrammarMatcher m(g, 64);
  EXPECT_EQ(specials(m), std::vector<int32_t>{kChannel});
  std::vector<int32_t> ids = {kChannel};
  for (int32_t id : v.Greedy("commentary to=functions.get_time ")) ids.push_back(id);
  ids.push_back(kConstrain);
  for (int32_t id : v.Greedy("json")) ids.push_back(id);
  ids.push_back(kMessage);
  ASSERT_TRUE(Walk(m, ids));
  ASSERT_TRUE(Walk(m, v.Greedy("{\"tz\":\"")));
  // Inside the string <|call|>'s bytes fit, but do not complete the grammar.
  EXPECT_TRUE(m.Fork().AcceptBytes("<|call|>"));
  EXPECT_EQ(specials(m), (std::vector<int32_t>{kChannel, kConstrain, kMessage}));
  EXPECT_FALSE(m.Fork().AcceptToken(kCall));
  ASSERT_TRUE(Walk(m, v.Greedy("UTC\"}")));
  // After the arguments: <|call|> only (not <|return|>, not <|end|>), and it ends the matcher.
  EXPECT_FALSE(m.CanEnd());
  EXPECT_EQ(m.ForcedContinuation(), "<|call|>");
  EXPECT_EQ(specials(m), std::vector<int32_t>{kCall});
  ExpectMaskIsExact(m, "before <|call|>");
  ASSERT_TRUE(m.AcceptToken(kCall));
  EXPECT_TRUE(m.terminated());
  EXPECT_TRUE(specials(m).empty());
  // Rolled back, the bytes spelled: then every EOS ends it, as anywhere the grammar may end.
  ASSERT_TRUE(m.Rollback(1).ok());
  EXPECT_FALSE(m.terminated());
  EXPECT_EQ(specials(m), std::vector<int32_t>{kCall});
  ASSERT_TRUE(m.AcceptBytes("<|call|>"));
  EXPECT_TRUE(m.MustEnd());
  EXPECT_EQ(specials(m), (std::vector<int32_t>{kReturn, kCall, kEnd}));
  ExpectMaskIsExact(m, "after <|call|> spelled");
  EXPECT_TRUE(m.AcceptToken(kReturn));
  // Lazy (tool_choice auto): free text with special tokens, the trigger, then the same call.
  auto lazy = MustCompile(calls + R"(,"trigger":"to=functions."})", v.vocab);
  EXPECT_EQ(lazy->markup_tokens(), (std::vector<int32_t>{kConstrain, kMessage}));
  EXPECT_EQ(lazy->markup_eos(), std::vector<int32_t>{kCall});
  GrammarMatcher n(lazy, 64);
  ids = {kChannel};
  for (int32_t id : v.Greedy("analysis Sure.")) ids.push_back(id);
  ids.push_back(kStart);  // free text while dormant
  ids.push_back(kChannel);
  for (int32_t id : v.Greedy("commentary to=functions.get_time ")) ids.push_back(id);
  ids.push_back(kConstrain);
  for (int32_t id : v.Greedy("json")) ids.push_back(id);
  ids.push_back(kMessage);
  for (int32_t id : v.Greedy("{\"tz\":\"UTC\"}")) ids.push_back(id);
  ids.push_back(kCall);
  ASSERT_TRUE(Walk(n, ids));
  EXPECT_TRUE(n.terminated());
  // While dormant an EOS (<|call|> included) ends an answer without a call, as before.
  GrammarMatcher d(lazy);
  ASSERT_TRUE(d.AcceptBytes("Sure."));
  EXPECT_TRUE(d.AcceptToken(kCall));
}

// A markup EOS that closes the value from deep inside it and completes the grammar ("}}}}}}" lies
// within the spec's separator; it closes p, o and the arguments, then is the end "}}}", after
// which the grammar may end).
TEST(MarkupTokens, AMarkupEosFromDeepInsideTheValue) {
  const SmallVocab v({"</s>", "}}}}}}", "}}}"}, {}, {0, 1, 2});
  const std::string spec =
      R"({"calls":[{"begin":"<f>","schema":{"type":"object","properties":{)"
      R"("o":{"type":"object","properties":{"p":{"type":"object","properties":{"m":{"type":"integer"}},)"
      R"("required":["m"],"additionalProperties":false}},"required":["p"],"additionalProperties":false}},)"
      R"("required":["o"],"additionalProperties":false},"end":"}}}"}],"separator":"}}}}}}","max_calls":2})";
  auto g = MustCompile(spec, v.vocab);
  EXPECT_EQ(g->markup_eos(), (std::vector<int32_t>{1, 2}));
  // The separator is markup only where a second call may follow.
  auto one = CompileStructural(R"({"calls":[{}],"separator":", ","max_calls":1})");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->markup_texts().empty());
  auto two = CompileStructural(R"({"calls":[{"begin":"<a>","end":"</a>"}],"prefix":"[","separator":", ","suffix":"]"})");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->markup_texts(), (std::vector<std::string>{"[", "<a>", "</a>", ", ", "]"}));
  const std::string head = R"(<f>{"o":{"p":{"m":1)";
  GrammarMatcher m(g, 64);
  std::string seen;
  for (char ch : head + "2}}}}}}") {
    ExpectMaskIsExact(m, "after '" + seen + "'");
    const std::vector<uint32_t> mask = MaskOf(m);
    const bool deep = seen == head || seen == head + "2", shallow = seen == head + "2}}}";
    EXPECT_EQ(Bit(mask, 1), deep) << seen;
    EXPECT_EQ(Bit(mask, 2), shallow) << seen;
    EXPECT_FALSE(Bit(mask, 0)) << seen;
    ASSERT_TRUE(m.AcceptToken(v.Id(std::string(1, ch)))) << seen;
    seen.push_back(ch);
  }
  ExpectMaskIsExact(m, "after the first call");  // every EOS, or a separator
  ASSERT_TRUE(m.Rollback(7).ok());
  ASSERT_TRUE(m.AcceptToken(1));
  EXPECT_TRUE(m.terminated());
}

TEST(MarkupTokens, AtMostKMaxMarkupTokensTheLongestFirst) {
  // Every substring of the begin marker is a special token: far more than the cap.
  const std::string marker = "<function=get_weather>";
  std::vector<std::string> pieces = {"</s>"};
  std::set<std::string> subs;
  for (size_t i = 0; i < marker.size(); ++i)
    for (size_t n = 1; i + n <= marker.size(); ++n) subs.insert(marker.substr(i, n));
  std::vector<int32_t> special;
  for (const std::string& s : subs) {
    special.push_back(static_cast<int32_t>(pieces.size()));
    pieces.push_back(s);
  }
  ASSERT_GT(subs.size(), 2 * CompiledGrammar::kMaxMarkupTokens);
  const SmallVocab v(pieces, special);
  const std::string spec = R"({"calls":[{"begin":"<function=get_weather>","schema":)" + std::string(kWeatherSchema) +
                           R"(,"end":"</function>"}]})";
  auto g = MustCompile(spec, v.vocab);
  ASSERT_EQ(g->markup_tokens().size(), CompiledGrammar::kMaxMarkupTokens);
  EXPECT_TRUE(std::is_sorted(g->markup_tokens().begin(), g->markup_tokens().end()));
  size_t shortest = marker.size();
  int32_t whole = -1;
  for (int32_t id : g->markup_tokens()) {
    shortest = std::min(shortest, v.vocab->piece(id).size());
    if (v.vocab->piece(id) == marker) whole = id;
  }
  ASSERT_GE(whole, 0);
  // Kept: every piece longer than the shortest kept one.
  for (int32_t id : special)
    if (v.vocab->piece(id).size() > shortest) EXPECT_TRUE(g->is_markup(id)) << v.vocab->piece(id);
  GrammarMatcher m(g, 64);
  std::vector<int32_t> ids = {whole};
  for (int32_t id : v.Greedy(R"({"city":"Paris","unit":"c"}</function>)")) ids.push_back(id);
  ASSERT_TRUE(Walk(m, ids));
  EXPECT_TRUE(m.CanEnd());
}

// --- Refused specs ------------------------------------------------------------------------

TEST(StructuralGrammar, BadSpecsNameTheirField) {
  const std::string weather = std::string(R"({"begin":"<tool_call>\n","schema":)") + kWeatherSchema + "}";
  struct Case {
    std::string spec;
    StatusCode code;
    std::string message;  // exact, or a prefix where it ends with "..."
  };
  const std::vector<Case> cases = {
      {"{", StatusCode::kInvalidArgument, "the structural spec is not valid JSON"},
      {"[]", StatusCode::kInvalidArgument, "the structural spec must be a JSON object"},
      {R"({"calls":[{}],"tools":[]})", StatusCode::kInvalidArgument,
       "tools: unknown key (the keys are calls, prefix, separator, suffix, min_calls, max_calls, max_whitespace, "
       "trigger)"},
      {"{}", StatusCode::kInvalidArgument, "calls: missing (an array of at least one call)"},
      {R"({"calls":[]})", StatusCode::kInvalidArgument, "calls: must be an array of at least one call"},
      {R"({"calls":{}})", StatusCode::kInvalidArgument, "calls: must be an array of at least one call"},
      {R"({"calls":[{},"x"]})", StatusCode::kInvalidArgument, "calls[1]: must be an object"},
      {R"({"calls":[{"begin":1}]})", StatusCode::kInvalidArgument, "calls[0].begin: must be a string"},
      {R"({"calls":[{"end":null}]})", StatusCode::kInvalidArgument, "calls[0].end: must be a string"},
      {R"({"calls":[{"name":"f"}]})", StatusCode::kInvalidArgument,
       "calls[0].name: unknown key (the keys are begin, schema, end)"},
      {R"({"calls":[{"schema":5}]})", StatusCode::kInvalidArgument,
       "calls[0].schema: a schema must be a JSON object or a boolean"},
      {R"({"calls":[{},{},{"schema":{"properties":{"x":{"minimum":"a"}}}}]})", StatusCode::kInvalidArgument,
       "calls[2].schema/properties/x/minimum: ..."},
      {R"({"calls":[{"schema":{"properties":{"n":{"type":"integer","multipleOf":3}}}}]})",
       StatusCode::kUnsupported, "calls[0].schema/properties/n/multipleOf: ..."},
      {R"({"calls":[{"schema":{"type":"string","minLength":3,"maxLength":2}}]})", StatusCode::kInvalidArgument,
       "calls[0].schema..."},
      {R"({"calls":[{}],"prefix":3})", StatusCode::kInvalidArgument, "prefix: must be a string"},
      {R"({"calls":[{}],"separator":[]})", StatusCode::kInvalidArgument, "separator: must be a string"},
      {R"({"calls":[{}],"suffix":false})", StatusCode::kInvalidArgument, "suffix: must be a string"},
      {R"({"calls":[{}],"min_calls":-1})", StatusCode::kInvalidArgument,
       "min_calls: must be an integer from 0 to 10000"},
      {R"({"calls":[{}],"min_calls":1.5})", StatusCode::kInvalidArgument,
       "min_calls: must be an integer from 0 to 10000"},
      {R"({"calls":[{}],"min_calls":"1"})", StatusCode::kInvalidArgument,
       "min_calls: must be an integer from 0 to 10000"},
      {R"({"calls":[{}],"max_calls":0})", StatusCode::kInvalidArgument,
       "max_calls: must be an integer from 1 (min_calls) to 10000, or -1 (unbounded)"},
      {R"({"calls":[{}],"min_calls":3,"max_calls":2})", StatusCode::kInvalidArgument,
       "max_calls: must be an integer from 3 (min_calls) to 10000, or -1 (unbounded)"},
      {R"({"calls":[{}],"max_calls":18446744073709551615})", StatusCode::kInvalidArgument,
       "max_calls: must be an integer from 1 (min_calls) to 10000, or -1 (unbounded)"},
      {R"({"calls":[{}],"max_whitespace":65})", StatusCode::kInvalidArgument,
       "max_whitespace: must be an integer from 0 to 64"},
      {R"({"calls":[{}],"trigger":""})", StatusCode::kInvalidArgument, "trigger: must be a string of 1 to 128 bytes"},
      {R"({"calls":[{}],"trigger":7})", StatusCode::kInvalidArgument, "trigger: must be a string"},
      {R"({"calls":[{"begin":"<a>"},{}],"trigger":"<a>"})", StatusCode::kInvalidArgument,
       "calls[1].begin: empty, and so is prefix: in lazy mode every call must start with the trigger \"<a>\""},
      {"{\"calls\":[" + weather + R"(,{"begin":"<tool>"}],"trigger":"<tool_call>"})", StatusCode::kInvalidArgument,
       R"(trigger: "<tool_call>" does not start calls[1] (its prefix + begin is "<tool>"))"},
      {R"({"calls":[{"begin":"<tool_call>"}],"trigger":"<tool_call>\n"})", StatusCode::kInvalidArgument,
       R"(trigger: "<tool_call>\n" does not start calls[0] (its prefix + begin is "<tool_call>"))"},
      {R"({"calls":[{"begin":"x"}],"prefix":"[TOOL_CALLS][","trigger":"[TOOL_CALLS]]"})",
       StatusCode::kInvalidArgument,
       R"(trigger: "[TOOL_CALLS]]" does not start calls[0] (its prefix + begin is "[TOOL_CALLS][x"))"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto g = CompileSpec(GrammarSpec{GrammarKind::kStructural, c.spec});
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), c.code) << g.status().ToString();
    const std::string& got = g.status().message();
    if (c.message.size() > 3 && c.message.substr(c.message.size() - 3) == "...") {
      const std::string prefix = c.message.substr(0, c.message.size() - 3);
      EXPECT_EQ(got.substr(0, prefix.size()), prefix) << got;
    } else {
      EXPECT_EQ(got, c.message);
    }
  }
  // The prefix alone may hold the trigger.
  EXPECT_TRUE(CompileStructural(R"({"calls":[{}],"prefix":"[TOOL_CALLS][","trigger":"[TOOL_CALLS]"})").ok());
}

TEST(StructuralGrammar, CapsOfGrammarLimits) {
  const std::string spec = HermesSpec();
  GrammarLimits small_source;
  small_source.max_source_bytes = 100;
  auto g = CompileStructural(spec, small_source);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(CompileSpec(GrammarSpec{GrammarKind::kStructural, spec}, small_source).status().code(),
            StatusCode::kResourceExhausted);
  GrammarLimits no_time;
  no_time.max_compile_time = std::chrono::milliseconds(0);
  g = CompileStructural(spec, no_time);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted) << g.status().ToString();
  // The symbol cap: each schema fits, both together do not.
  auto weather = CompileJsonSchemaText(kWeatherSchema), time = CompileJsonSchemaText(kTimeSchema);
  ASSERT_TRUE(weather.ok() && time.ok());
  GrammarLimits few_symbols;
  few_symbols.max_symbols = std::max(weather->symbol_count(), time->symbol_count()) + 10;
  g = CompileStructural(spec, few_symbols);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted) << g.status().ToString();
  few_symbols.max_symbols = 100;  // the first schema alone is too large
  g = CompileStructural(spec, few_symbols);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "calls[0].schema: grammar has more than 100 symbols (its size cap)");
  GrammarLimits few_repeats;
  few_repeats.max_repeat = 4;
  g = CompileStructural(HermesSpec(R"(,"max_calls":5)"), few_repeats);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "max_calls: must be an integer from 1 (min_calls) to 4, or -1 (unbounded)");
}

TEST(StructuralGrammar, GrammarCacheRoundTrip) {
  GrammarCache cache(Small().vocab, 4);
  const GrammarSpec spec{GrammarKind::kStructural, HermesSpec(R"(,"trigger":"<tool_call>")")};
  auto a = cache.Get(spec);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = cache.Get(GrammarSpec{GrammarKind::kStructural, std::string(spec.text)});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ((*a)->grammar().trigger(), "<tool_call>");
  // Compiling the same text again gives the same grammar.
  auto again = CompileSpec(spec);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Dump(), (*a)->grammar().Dump());
  EXPECT_EQ(GrammarKindName(GrammarKind::kStructural), "structural");
  // The same calls, eager: another grammar.
  auto eager = cache.Get(GrammarSpec{GrammarKind::kStructural, HermesSpec()});
  ASSERT_TRUE(eager.ok());
  EXPECT_NE(eager->get(), a->get());
  EXPECT_FALSE((*eager)->grammar().lazy());
  GrammarMatcher m(*a);
  EXPECT_TRUE(m.AcceptBytes("Sure." + kWeatherCall));
  EXPECT_TRUE(m.CanEnd());
}

// --- A real vocabulary --------------------------------------------------------------------

TEST(LazyStructuralGrammar, HermesOnARealVocabularyMasksAndAcceptsARealisticOutput) {
  auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-deepseek-llm.gguf");
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto tok = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  auto vocab = TokenVocabOf(**tok);
  auto g = MustCompile(HermesSpec(R"(,"trigger":"<tool_call>")"), vocab);
  const std::string text = "I'll look up the weather in Paris for you.\n" + kWeatherCall + "\n" + kTimeCall;
  const std::vector<int32_t> ids = EncodeAsOutput(**tok, text);
  GrammarMatcher m(g, 256);
  std::string seen;
  size_t dormant_steps = 0;
  for (int32_t id : ids) {
    dormant_steps += m.dormant();
    ExpectMaskIsExact(m, "after '" + seen + "'");
    ASSERT_TRUE(m.AcceptToken(id)) << "'" << vocab->piece(id) << "' after '" << seen << "'";
    seen += vocab->piece(id);
  }
  ASSERT_EQ(seen, text);
  EXPECT_GE(dormant_steps, 10u);
  EXPECT_FALSE(m.dormant());
  ExpectMaskIsExact(m, "at the end");
  EXPECT_TRUE(m.AcceptToken(vocab->eos_ids()[0]));
  // A wrong tool name or a bad enum value is refused token by token after the same free text.
  for (const std::string& bad :
       {std::string("<tool_call>\n{\"name\": \"get_date\""),
        std::string("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\",\"unit\":\"k\"")}) {
    GrammarMatcher b(g);
    bool refused = false;
    for (int32_t id : EncodeAsOutput(**tok, "Sure.\n" + bad)) refused |= !refused && !b.AcceptToken(id);
    EXPECT_TRUE(refused) << bad;
  }
}

}  // namespace
}  // namespace radixserve::grammar
