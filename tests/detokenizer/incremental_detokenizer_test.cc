// Incremental detokenization: streamed deltas add up to the whole text, never split a UTF-8
// character, trim stop strings and stop tokens, and the state table stays bounded.
#include <gtest/gtest.h>

#include "core/detokenizer/incremental_detokenizer.h"
#include "core/gguf/gguf_reader.h"

namespace radixserve::detok {
namespace {

std::unique_ptr<Tokenizer> Load(const std::string& rel) {
  auto f = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + rel);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  auto t = Tokenizer::FromGguf(**f);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

bool ValidUtf8(const std::string& s) { return Utf8CompleteLength(s) == s.size(); }

// Streams `output` token by token after `prompt` and returns the concatenated deltas.
std::string Stream(IncrementalDetokenizer& d, const std::vector<int32_t>& prompt, const std::vector<int32_t>& output,
                   uint64_t rid, bool check_each_delta = true) {
  size_t surr = prompt.size() > 5 ? prompt.size() - 5 : 0;
  std::string all;
  for (size_t i = 0; i < output.size(); ++i) {
    DetokInput in;
    in.rid = rid;
    std::vector<int32_t> ids;
    if (i == 0) {
      ids.assign(prompt.begin() + surr, prompt.end());
      in.read_offset = static_cast<int32_t>(ids.size());
    }
    ids.push_back(output[i]);
    in.new_ids = ids;
    in.finished = i + 1 == output.size();
    std::string delta = d.Step(in);
    if (check_each_delta) {
      EXPECT_TRUE(ValidUtf8(delta)) << "delta splits a character at token " << i;
    }
    all += delta;
  }
  return all;
}

TEST(IncrementalDetokenizer, DeltasAddUpToTheTextAndNeverSplitCharacters) {
  auto tok = Load("/vocab/ggml-vocab-llama-spm.gguf");
  IncrementalDetokenizer d(tok.get());
  const std::vector<std::string> outputs = {
      " Hello world, how are you today?", " 你好，世界！ こんにちは", " emoji 🦙🚀 and accents éàü",
      "\n\nnew lines\tand  spaces", " 🦙"};
  uint64_t rid = 1;
  for (const auto& text : outputs) {
    auto prompt = tok->Encode("The prompt says:", true, false);
    auto full = tok->Encode(std::string("The prompt says:") + text, true, false);
    ASSERT_GT(full.size(), prompt.size());
    std::vector<int32_t> output(full.begin() + prompt.size(), full.end());
    // Expected: the text the output adds to the prompt.
    std::string expected = tok->Decode(full, true).substr(tok->Decode(prompt, true).size());
    EXPECT_EQ(Stream(d, prompt, output, rid++), expected) << text;
  }
  EXPECT_EQ(d.num_states(), 0u);
}

TEST(IncrementalDetokenizer, HoldsBackAByteTokenSplitCharacter) {
  auto tok = Load("/models/stories260K.gguf");  // 512 tokens: most non-ASCII falls back to bytes
  IncrementalDetokenizer d(tok.get());
  auto ids = tok->Encode(" é", false, false);
  ASSERT_GE(ids.size(), 2u);  // the two UTF-8 bytes of é come as separate byte tokens
  DetokInput first;
  first.rid = 9;
  std::vector<int32_t> a = {ids[0]};
  first.new_ids = a;
  std::string d1 = d.Step(first);
  std::string rest;
  for (size_t i = 1; i < ids.size(); ++i) {
    DetokInput in;
    in.rid = 9;
    std::vector<int32_t> one = {ids[i]};
    in.new_ids = one;
    in.finished = i + 1 == ids.size();
    rest += d.Step(in);
  }
  EXPECT_TRUE(ValidUtf8(d1));
  EXPECT_EQ(d1 + rest, tok->DecodeWindow(ids, true));
  EXPECT_NE((d1 + rest).find("é"), std::string::npos);
}

TEST(IncrementalDetokenizer, TrimsTheMatchedStopStringAndStopToken) {
  auto tok = Load("/vocab/ggml-vocab-llama-spm.gguf");
  IncrementalDetokenizer d(tok.get());
  auto ids = tok->Encode(" one two STOP three", false, false);
  DetokInput in;
  in.rid = 5;
  in.new_ids = ids;
  in.finished = true;
  in.matched_stop_str = "STOP";
  std::string whole = tok->DecodeWindow(ids, true);  // "  one two STOP three" (space prefix kept)
  EXPECT_EQ(d.Step(in), whole.substr(0, whole.find("STOP")));
  in.rid = 6;
  in.no_stop_trim = true;
  EXPECT_EQ(d.Step(in), whole);
  // Finished by a stop token id: its text is dropped.
  in.rid = 7;
  in.no_stop_trim = false;
  in.matched_stop_str = "";
  in.matched_stop_token = true;
  std::string without_last = tok->DecodeWindow(std::span<const int32_t>(ids).first(ids.size() - 1), true);
  EXPECT_EQ(d.Step(in), without_last);
}

TEST(IncrementalDetokenizer, StateTableIsBounded) {
  auto tok = Load("/models/stories260K.gguf");
  IncrementalDetokenizer d(tok.get(), 4);
  std::vector<int32_t> ids = {100};
  for (uint64_t rid = 0; rid < 10; ++rid) {
    DetokInput in;
    in.rid = rid;
    in.new_ids = ids;
    d.Step(in);
  }
  EXPECT_EQ(d.num_states(), 4u);
  d.Forget(9);
  EXPECT_EQ(d.num_states(), 3u);
}

}  // namespace
}  // namespace radixserve::detok
