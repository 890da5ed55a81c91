// Tokenizer behaviour beyond the conformance strings: BOS/EOS flags, special-token parsing,
// decoding (pieces, space prefix, windows), byte fallback, refused models, concurrency, and
// the stories260K golden prompts made with llama.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve {
namespace {

using Ids = std::vector<int32_t>;

std::string VocabPath(const std::string& name) {
  return std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf";
}

// Loads each shared vocab once per test program.
const Tokenizer& Load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    auto file = gguf::GgufFile::Open(name == "stories260K" ? std::string(RADIXSERVE_SHARED_DIR) +
                                                                  "/models/stories260K.gguf"
                                                            : VocabPath(name));
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    auto tok = Tokenizer::FromGguf(**file);
    EXPECT_TRUE(tok.ok()) << tok.status().ToString();
    it = cache.emplace(name, std::move(tok).value()).first;
  }
  return *it->second;
}

Result<std::unique_ptr<Tokenizer>> FromBytes(const gguf::GgufWriter& w) {
  auto bytes = w.Serialize();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  // The parsed file must outlive FromGguf only; the tokenizer copies what it needs.
  static std::vector<std::vector<uint8_t>> keep;
  keep.push_back(std::move(bytes).value());
  auto file = gguf::GgufFile::Parse(std::span<const uint8_t>(keep.back().data(), keep.back().size()), "mem.gguf");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return Tokenizer::FromGguf(**file);
}

gguf::GgufWriter TinySpmWriter() {
  gguf::GgufWriter w;
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a",
                                             "ab", "<|end|>"});
  w.SetF32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -2, -0.5f, -0.1f, 0});
  w.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 1, 3});
  return w;
}

// ---- loading -------------------------------------------------------------------------

TEST(TokenizerLoadTest, RefusesWordPieceNamingIt) {
  auto file = gguf::GgufFile::Open(VocabPath("bert-bge"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = Tokenizer::FromGguf(**file);
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(tok.status().message().find("'bert'"), std::string::npos) << tok.status().message();
}

TEST(TokenizerLoadTest, RefusesUnknownModelAndPreTokenizer) {
  gguf::GgufWriter w = TinySpmWriter();
  w.SetString("tokenizer.ggml.model", "t5");
  auto t5 = FromBytes(w);
  ASSERT_FALSE(t5.ok());
  EXPECT_EQ(t5.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t5.status().message().find("'t5'"), std::string::npos);

  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", "klingon");
  w.SetStringArray("tokenizer.ggml.merges", {"a b"});
  auto pre = FromBytes(w);
  ASSERT_FALSE(pre.ok());
  EXPECT_EQ(pre.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(pre.status().message().find("klingon"), std::string::npos);
}

TEST(TokenizerLoadTest, MissingKeysAndBadMetadata) {
  gguf::GgufWriter none;
  none.SetString("general.name", "x");
  auto a = FromBytes(none);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);

  gguf::GgufWriter w = TinySpmWriter();
  w.SetString("tokenizer.ggml.model", "gpt2");  // BPE needs merges
  auto b = FromBytes(w);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kNotFound);

  gguf::GgufWriter dup = TinySpmWriter();
  dup.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "a", "b", "c", "d", "e"});
  auto c = FromBytes(dup);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kCorrupt);

  gguf::GgufWriter short_scores = TinySpmWriter();
  short_scores.SetF32Array("tokenizer.ggml.scores", {0, 0});
  auto d = FromBytes(short_scores);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kCorrupt);
}

TEST(TokenizerLoadTest, MetadataFlagsAndIds) {
  const Tokenizer& spm = Load("llama-spm");
  EXPECT_EQ(spm.model_name(), "llama");
  EXPECT_EQ(spm.vocab_size(), 32000);
  EXPECT_EQ(spm.bos_id(), 1);
  EXPECT_EQ(spm.eos_id(), 2);
  EXPECT_EQ(spm.unk_id(), 0);
  EXPECT_TRUE(spm.add_bos());
  EXPECT_FALSE(spm.add_eos());
  EXPECT_TRUE(spm.add_space_prefix());

  const Tokenizer& gpt2 = Load("gpt-2");
  EXPECT_EQ(gpt2.model_name(), "gpt2");
  EXPECT_EQ(gpt2.pre_name(), "gpt-2");
  EXPECT_FALSE(gpt2.add_bos());
  EXPECT_FALSE(gpt2.add_space_prefix());
  EXPECT_EQ(gpt2.bos_id(), 50256);

  // stories260K stores padding id 0xFFFFFFFF, meaning "none".
  const Tokenizer& stories = Load("stories260K");
  EXPECT_EQ(stories.pad_id(), -1);
  EXPECT_EQ(stories.vocab_size(), 512);
}

TEST(TokenizerLoadTest, AddSpacePrefixKeyIsHonoured) {
  gguf::GgufWriter w = TinySpmWriter();
  auto with = FromBytes(w);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ((*with)->Encode("a", false, false), (Ids{6}));  // "▁a"
  w.SetBool("tokenizer.ggml.add_space_prefix", false);
  auto without = FromBytes(w);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ((*without)->Encode("a", false, false), (Ids{4}));
  EXPECT_EQ((*without)->Decode(Ids{3, 4}, false), " a");  // nothing to strip without a prefix
}

// ---- SPM ----------------------------------------------------------------------------

TEST(SpmTest, HigherScoreMergesFirst) {
  auto tok = FromBytes(TinySpmWriter());
  ASSERT_TRUE(tok.ok());
  // "▁ab": "▁a" (-0.5) and "ab" (-0.1) compete; "ab" has the higher score and wins.
  EXPECT_EQ((*tok)->Encode("ab", false, false), (Ids{3, 7}));
  // Characters outside the vocab with no byte tokens fall back to <unk>.
  EXPECT_EQ((*tok)->Encode("az", false, false), (Ids{6, 0}));
}

TEST(SpmTest, WholeTextMergingWhenATokenHasAnInnerSpace) {
  // "a▁" puts "▁" after another character, so words cannot be merged one by one: the
  // tokenizer must see that and merge across the word boundary ("a▁b").
  gguf::GgufWriter w = TinySpmWriter();
  w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a",
                                             "a\xE2\x96\x81", "a\xE2\x96\x81" "b"});
  w.SetF32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -2, -0.5f, -0.2f, 0});
  w.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 1, 1});
  auto tok = FromBytes(w);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->Encode("a b", false, false), (Ids{3, 8}));
  EXPECT_EQ((*tok)->Decode(Ids{3, 8}, false), "a b");
}

TEST(SpmTest, BosEosAndPrefix) {
  const Tokenizer& t = Load("llama-spm");
  EXPECT_EQ(t.Encode("Hello world", true, false), (Ids{1, 15043, 3186}));
  EXPECT_EQ(t.Encode("Hello world", false, false), (Ids{15043, 3186}));
  EXPECT_EQ(t.Encode("", true, false), (Ids{1}));
  EXPECT_EQ(t.Encode("", false, false), Ids{});
}

TEST(SpmTest, ByteFallbackRoundTrips) {
  const Tokenizer& t = Load("llama-spm");
  const std::string clef = "\xF0\x9D\x84\x9E";  // U+1D11E, not in the vocab
  const Ids ids = t.Encode(clef, false, false);
  ASSERT_EQ(ids.size(), 5u);  // "▁" + four byte tokens
  EXPECT_EQ(t.TokenText(ids[1]), "<0xF0>");
  EXPECT_EQ(t.Decode(ids, false), clef);
  // Invalid UTF-8 survives too.
  const std::string junk = "a\xff\xfe b\x80";
  EXPECT_EQ(t.Decode(t.Encode(junk, false, false), false), junk);
}

TEST(SpmTest, Stories260KGoldenPrompts) {
  // Prompt ids made by llama.cpp's llama-tokenize for the stories260K model.
  std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/models/golden_stories260K.json");
  ASSERT_TRUE(in.good());
  const auto doc = nlohmann::json::parse(in);
  auto parse_ids = [](const nlohmann::json& j) {
    if (j.is_array()) return j.get<Ids>();
    const std::string s = j.get<std::string>();
    Ids ids;
    std::string digits;
    for (char c : s + ",") {
      if (c >= '0' && c <= '9') {
        digits.push_back(c);
      } else if (!digits.empty()) {
        ids.push_back(std::stoi(digits));
        digits.clear();
      }
    }
    return ids;
  };
  const Tokenizer& t = Load("stories260K");
  int n = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string prompt = c.at("prompt");
    const Ids with_bos = parse_ids(c.at("prompt_ids"));
    const Ids completion = parse_ids(c.at("completion_ids"));
    EXPECT_EQ(t.Encode(prompt, true, false), with_bos) << prompt;
    EXPECT_EQ(t.Encode(prompt, false, false), parse_ids(c.at("prompt_ids_no_bos"))) << prompt;
    // The completion continues the prompt: decode it as a window (no prefix space removed).
    EXPECT_EQ(t.DecodeWindow(completion, true), c.at("completion_text").get<std::string>()) << prompt;
    Ids all = with_bos;
    all.insert(all.end(), completion.begin(), completion.end());
    EXPECT_EQ(t.Decode(all, true), c.at("full_text").get<std::string>()) << prompt;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

// ---- BPE ---------------------------------------------------------------------------

TEST(BpeTest, MergesByRankLeftmostFirst) {
  gguf::GgufWriter w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", "gpt-2");
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b", "aa", "ab", "aab", "<|endoftext|>"});
  w.SetI32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3});
  w.SetStringArray("tokenizer.ggml.merges", {"a a", "a b", "aa b"});
  w.SetU32("tokenizer.ggml.eos_token_id", 5);
  auto tok = FromBytes(w);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const Tokenizer& t = **tok;
  EXPECT_EQ(t.Encode("aaa", false, false), (Ids{2, 0}));  // equal ranks: the leftmost pair first
  EXPECT_EQ(t.Encode("aab", false, false), (Ids{4}));     // "a a" (rank 0) before "a b", then "aa b"
  EXPECT_EQ(t.Encode("ba", false, false), (Ids{1, 0}));
  EXPECT_EQ(t.Encode("ab<|endoftext|>", false, true), (Ids{3, 5}));
  EXPECT_TRUE(t.IsEog(5));
  EXPECT_EQ(t.bos_id(), -1);  // BPE vocabs have no default BOS
}

TEST(BpeTest, Llama3IgnoresMergesForWholeWordTokens) {
  // With pre "llama-bpe" a word that is itself a token is emitted whole, even when the
  // merges alone would not build it (Hugging Face's ignore_merges).
  gguf::GgufWriter w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b", "c", "ab", "abc", "<|begin_of_text|>"});
  w.SetI32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3});
  w.SetStringArray("tokenizer.ggml.merges", {"a b"});
  w.SetU32("tokenizer.ggml.bos_token_id", 5);
  w.SetString("tokenizer.ggml.pre", "gpt-2");
  auto plain = FromBytes(w);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ((*plain)->Encode("abc", true, false), (Ids{3, 2}));
  w.SetString("tokenizer.ggml.pre", "llama-bpe");
  auto llama3 = FromBytes(w);
  ASSERT_TRUE(llama3.ok()) << llama3.status().ToString();
  EXPECT_TRUE((*llama3)->add_bos());  // llama3 vocabs add BOS unless told otherwise
  EXPECT_EQ((*llama3)->Encode("abc", true, false), (Ids{5, 4}));
}

// ---- special tokens ------------------------------------------------------------------

TEST(SpecialTokenTest, ParseSpecialEmitsControlIds) {
  const Tokenizer& t = Load("phi-3");  // <|user|> 32010, <|end|> 32007, <|assistant|> 32001
  const std::string text = "<|user|>\nHi<|end|>\n<|assistant|>";
  const Ids parsed = t.Encode(text, false, true);
  ASSERT_GE(parsed.size(), 4u);
  EXPECT_EQ(parsed.front(), 32010);
  EXPECT_EQ(parsed.back(), 32001);
  EXPECT_NE(std::find(parsed.begin(), parsed.end(), 32007), parsed.end());
  // After a special token the text fragment gets the space prefix again, as in llama.cpp.
  EXPECT_EQ(t.Encode("<|user|>Hello", false, true), (Ids{32010, 15043}));

  const Ids plain = t.Encode(text, false, false);
  for (int32_t id : {32010, 32007, 32001}) {
    EXPECT_EQ(std::find(plain.begin(), plain.end(), id), plain.end()) << "control id " << id << " from plain text";
  }
  EXPECT_EQ(t.Decode(plain, false), text);
}

TEST(SpecialTokenTest, SpecialTextAtEdgesAndBackToBack) {
  const Tokenizer& t = Load("starcoder");  // <|endoftext|> 0, <fim_prefix> 1, <fim_middle> 2, <fim_suffix> 3
  EXPECT_EQ(t.Encode("<fim_prefix><fim_suffix><fim_middle>", false, true), (Ids{1, 3, 2}));
  const std::string code = "<fim_prefix>def f():\n    return 1<fim_suffix>\n<fim_middle>";
  const Ids ids = t.Encode(code, false, true);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids.back(), 2);
  // BPE adds no space prefix, so parsing special tokens round-trips exactly.
  EXPECT_EQ(t.Decode(ids, false), code);
  EXPECT_EQ(t.Decode(ids, true), "def f():\n    return 1\n");
  // An unterminated or partial special text is plain text.
  const Ids partial = t.Encode("<fim_prefix", false, true);
  EXPECT_GT(partial.size(), 1u);
}

TEST(SpecialTokenTest, UserDefinedTokensMatchLongestFirstEvenWithoutParseSpecial) {
  // mpt has user-defined tokens for runs of 2..24 spaces (Hugging Face "added tokens").
  const Tokenizer& t = Load("mpt");
  const Ids a = t.Encode("a", false, false);
  const Ids b = t.Encode("b", false, false);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  const Ids ids = t.Encode("a" + std::string(30, ' ') + "b", false, false);
  EXPECT_EQ(ids, (Ids{a[0], 50254, 50272, b[0]}));  // 24 spaces, then 6
  EXPECT_EQ(t.TokenToPiece(50254), std::string(24, ' '));
  EXPECT_TRUE(t.IsSpecial(50254));
  EXPECT_FALSE(t.IsControl(50254));  // user-defined text is kept by skip_special
  EXPECT_EQ(t.Decode(ids, true), "a" + std::string(30, ' ') + "b");
}

TEST(SpecialTokenTest, AddSpecialFollowsFlags) {
  const Tokenizer& ds = Load("deepseek-coder");  // add_bos true, BOS 32013
  const Ids ids = ds.Encode("x", true, false);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], 32013);
  const Tokenizer& gpt2 = Load("gpt-2");  // no add_bos key: BPE default is no BOS
  EXPECT_EQ(gpt2.Encode("x", true, false), gpt2.Encode("x", false, false));

  gguf::GgufWriter w = TinySpmWriter();
  w.SetBool("tokenizer.ggml.add_eos_token", true);
  w.SetBool("tokenizer.ggml.add_bos_token", false);
  auto tok = FromBytes(w);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ((*tok)->Encode("a", true, false), (Ids{6, 2}));
}

// llama.cpp gives every special token of a model named like Phi-3 the RSTRIP attribute
// (whitespace right after the token is dropped), except <unk>, <s> and <|endoftext|>.
TEST(SpecialTokenTest, Phi3SpecialTokensSwallowTheWhitespaceAfterThem) {
  const Tokenizer& phi3 = Load("phi-3");  // general.name "Phi3"; </s> 2 is user-defined
  // "Hello", </s>, "world": the text after a special token gets the space prefix, so "world"
  // is "▁world" 3186. Keeping the space would make "▁▁world" = "▁" 29871 + "▁world".
  EXPECT_EQ(phi3.Encode("Hello</s> world", false, true), (Ids{15043, 2, 3186}));
  // </s> is user-defined here, so it is matched, and strips, without parse_special as well.
  EXPECT_EQ(phi3.Encode("Hello</s> world", false, false), (Ids{15043, 2, 3186}));
  // The whole whitespace run goes (<|user|> 32010, "▁Hi" 6324, <|end|> 32007, <|assistant|> 32001).
  EXPECT_EQ(phi3.Encode("<|user|>\n \tHi<|end|>\n<|assistant|>\n", false, true),
            (Ids{32010, 6324, 32007, 32001}));
  // The exceptions keep it: " Hello" becomes "▁▁Hello" = "▁" + "▁Hello" 15043.
  EXPECT_EQ(phi3.Encode("<s> Hello", false, true), (Ids{1, 29871, 15043}));
  EXPECT_EQ(phi3.Encode("<|endoftext|> Hello", false, true), (Ids{32000, 29871, 15043}));

  // Any other vocab keeps the space: llama-spm has the same ids and gives the extra "▁".
  const Tokenizer& spm = Load("llama-spm");
  EXPECT_EQ(spm.Encode("Hello</s> world", false, true), (Ids{15043, 2, 29871, 3186}));
}

// As in llama.cpp, the model name decides: general.name, lowercased, contains "phi-3" or
// "phi3". general.architecture (and tokenizer.ggml.pre) play no part.
TEST(SpecialTokenTest, WhitespaceStripIsDecidedByTheModelName) {
  auto encode = [](const char* key, const char* value) {
    gguf::GgufWriter w = TinySpmWriter();  // <|end|> 8 (control), "▁" 3, "▁a" 6
    w.SetString(key, value);
    auto tok = FromBytes(w);
    EXPECT_TRUE(tok.ok()) << tok.status().ToString();
    return tok.ok() ? (*tok)->Encode("<|end|> a", false, true) : Ids{};
  };
  EXPECT_EQ(encode("general.name", "Phi-3-mini-4k-instruct"), (Ids{8, 6}));
  EXPECT_EQ(encode("general.name", "PHI3 medium"), (Ids{8, 6}));
  EXPECT_EQ(encode("general.name", "Phi-2"), (Ids{8, 3, 6}));  // " a" → "▁▁a" = "▁" + "▁a"
  EXPECT_EQ(encode("general.architecture", "phi3"), (Ids{8, 3, 6}));
}

TEST(SpecialTokenTest, EndOfGeneration) {
  const Tokenizer& phi3 = Load("phi-3");
  EXPECT_TRUE(phi3.IsEog(32000));   // EOS <|endoftext|>
  EXPECT_TRUE(phi3.IsEog(32007));   // <|end|>, found by text
  EXPECT_FALSE(phi3.IsEog(32010));  // <|user|>
  EXPECT_FALSE(phi3.IsEog(1));
  EXPECT_FALSE(phi3.IsEog(-1));
  EXPECT_FALSE(phi3.IsEog(1 << 30));
  EXPECT_TRUE(Load("llama-spm").IsEog(2));
  EXPECT_TRUE(Load("gpt-2").IsEog(50256));
}

// ---- decoding ------------------------------------------------------------------------

TEST(DecodeTest, Pieces) {
  const Tokenizer& spm = Load("llama-spm");
  EXPECT_EQ(spm.TokenToPiece(15043), " Hello");
  EXPECT_EQ(spm.TokenToPiece(13), "\n");  // <0x0A>
  EXPECT_EQ(spm.TokenToPiece(1), "<s>");
  EXPECT_EQ(spm.TokenToPiece(-1), "");
  EXPECT_EQ(spm.TokenToPiece(32000), "");
  EXPECT_EQ(spm.TokenText(15043), "\xE2\x96\x81Hello");
  const Tokenizer& gpt2 = Load("gpt-2");
  EXPECT_EQ(gpt2.TokenToPiece(995), " world");  // "Ġworld"
  EXPECT_EQ(gpt2.TokenToPiece(198), "\n");       // "Ċ"
}

TEST(DecodeTest, SpacePrefixAndSpecialSkipping) {
  const Tokenizer& t = Load("llama-spm");
  const Ids ids = t.Encode("Hello world", true, false);
  EXPECT_EQ(t.Decode(ids, true), "Hello world");
  EXPECT_EQ(t.Decode(ids, false), "<s> Hello world");  // the prefix space follows <s>, as in llama.cpp
  EXPECT_EQ(t.DecodeWindow(Ids{3186}, false), " world");
  EXPECT_EQ(t.Decode(Ids{3186}, false), "world");
  // A text that really starts with a space keeps it: "▁▁Hello" decodes to " Hello".
  EXPECT_EQ(t.Decode(t.Encode(" Hello", false, false), false), " Hello");
  EXPECT_EQ(t.Decode(Ids{15043, -5, 99999, 3186}, false), "Hello world");  // bad ids are skipped
}

TEST(DecodeTest, WindowsConcatenateToWholeDecode) {
  const std::string text = "Streaming text, with émojis 🦙 and\nnew lines — plus 12345 numbers.";
  for (const std::string name : {"llama-spm", "gpt-2", "deepseek-llm"}) {
    const Tokenizer& t = Load(name);
    const Ids ids = t.Encode(text, true, false);
    // The head must hold the first text token: that is where Decode removes the prefix space.
    const size_t first_text = t.add_bos() ? 2 : 1;
    for (size_t cut = first_text; cut <= ids.size(); ++cut) {
      const std::span<const int32_t> all(ids);
      const std::string joined = t.Decode(all.subspan(0, cut), true) + t.DecodeWindow(all.subspan(cut), true);
      ASSERT_EQ(joined, text) << name << " cut at " << cut;
    }
    // Byte tokens can end a window inside a character: Utf8CompleteLength finds the safe end.
    std::string streamed, pending;
    for (int32_t id : ids) {
      pending += t.DecodeWindow(Ids{id}, true);
      const size_t ok = Utf8CompleteLength(pending);
      streamed += pending.substr(0, ok);
      pending.erase(0, ok);
    }
    streamed += pending;
    if (t.add_space_prefix()) streamed.erase(0, 1);
    EXPECT_EQ(streamed, text) << name;
  }
}

// ---- concurrency ---------------------------------------------------------------------

TEST(TokenizerConcurrencyTest, ConcurrentEncodeDecodeAgree) {
  const Tokenizer& spm = Load("llama-spm");
  const Tokenizer& bpe = Load("deepseek-coder");
  std::vector<std::string> texts;
  for (int i = 0; i < 16; ++i) {
    texts.push_back("request " + std::to_string(i) + ": def f(x):\n    return x * " + std::to_string(i * 7) +
                    "  # ünïcode ✓");
  }
  std::vector<Ids> want_spm, want_bpe;
  for (const auto& s : texts) {
    want_spm.push_back(spm.Encode(s, true, true));
    want_bpe.push_back(bpe.Encode(s, true, true));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int th = 0; th < 4; ++th) {
    threads.emplace_back([&, th] {
      for (int round = 0; round < 50; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          if (spm.Encode(texts[i], true, true) != want_spm[i]) ++mismatches[th];
          if (bpe.Encode(texts[i], true, true) != want_bpe[i]) ++mismatches[th];
          if (bpe.Decode(want_bpe[i], true) != texts[i]) ++mismatches[th];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace radixserve
