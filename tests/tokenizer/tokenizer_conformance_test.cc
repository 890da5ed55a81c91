// Conformance against the reference tokenizations in ../shared/vocab: for every
// ggml-vocab-X.gguf with X.gguf.inp/.out, each test string must encode (no BOS, special
// text not parsed) to exactly the expected ids, and decode back to the string.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve {
namespace {

namespace fs = std::filesystem;

const fs::path kVocabDir = fs::path(RADIXSERVE_SHARED_DIR) / "vocab";
constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ReadInputs(const fs::path& p) {
  const std::string all = ReadFile(p);
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < all.size()) {
    const size_t sep = all.find(kSeparator, pos);
    if (sep == std::string::npos) break;
    out.push_back(all.substr(pos, sep - pos));
    pos = sep + kSeparator.size();
  }
  return out;
}

std::vector<std::vector<int32_t>> ReadOutputs(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    int32_t id;
    while (ls >> id) ids.push_back(id);
    out.push_back(std::move(ids));
  }
  return out;
}

std::string Show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += " " + std::to_string(id);
  return s;
}

// Escapes control bytes so that failing inputs print readably.
std::string Printable(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out.push_back(c);
  }
  return out;
}

struct VocabCase {
  std::string name;  // e.g. "llama-spm"
};

std::vector<VocabCase> VocabsWithTests() {
  std::vector<VocabCase> out;
  if (!fs::exists(kVocabDir)) return out;
  for (const auto& e : fs::directory_iterator(kVocabDir)) {
    const std::string file = e.path().filename().string();
    const std::string prefix = "ggml-vocab-", suffix = ".gguf.inp";
    if (file.size() > prefix.size() + suffix.size() && file.rfind(prefix, 0) == 0 &&
        file.substr(file.size() - suffix.size()) == suffix) {
      out.push_back({file.substr(prefix.size(), file.size() - prefix.size() - suffix.size())});
    }
  }
  std::sort(out.begin(), out.end(), [](const VocabCase& a, const VocabCase& b) { return a.name < b.name; });
  return out;
}

class ConformanceTest : public ::testing::TestWithParam<VocabCase> {};

TEST_P(ConformanceTest, EncodesLikeReference) {
  const std::string name = GetParam().name;
  const fs::path gguf_path = kVocabDir / ("ggml-vocab-" + name + ".gguf");
  auto file = gguf::GgufFile::Open(gguf_path.string());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto model = (*file)->GetString("tokenizer.ggml.model");
  ASSERT_TRUE(model.ok()) << model.status().ToString();

  auto tok = Tokenizer::FromGguf(**file);
  if (*model != "llama" && *model != "gpt2") {
    // WordPiece (bert) is not implemented: say so instead of passing silently.
    ASSERT_FALSE(tok.ok());
    EXPECT_EQ(tok.status().code(), StatusCode::kUnsupported);
    std::printf("[ conformance ] %-16s refused as it should be: unsupported model %s\n", name.c_str(), model->c_str());
    return;
  }
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();

  const auto inputs = ReadInputs(kVocabDir / ("ggml-vocab-" + name + ".gguf.inp"));
  const auto expected = ReadOutputs(kVocabDir / ("ggml-vocab-" + name + ".gguf.out"));
  ASSERT_FALSE(inputs.empty());
  ASSERT_EQ(inputs.size(), expected.size()) << "inp/out files disagree on the number of cases";

  int passed = 0, round_trips = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int32_t> ids = (*tok)->Encode(inputs[i], /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(ids, expected[i]) << name << " case " << i << " input \"" << Printable(inputs[i]) << "\"\n  got:     "
                                << Show(ids) << "\n  expected:" << Show(expected[i]);
    if (ids == expected[i]) ++passed;
    // Lossless: byte fallback (SPM) and byte-level BPE reproduce every byte; the space
    // prefix that SPM adds is removed by Decode.
    const std::string decoded = (*tok)->Decode(ids, /*skip_special=*/false);
    EXPECT_EQ(decoded, inputs[i]) << name << " case " << i << " does not round-trip";
    if (decoded == inputs[i]) ++round_trips;
  }
  std::printf("[ conformance ] %-16s %d/%zu encodings match, %d/%zu round-trip\n", name.c_str(), passed,
              inputs.size(), round_trips, inputs.size());
}

TEST_P(ConformanceTest, RandomTextRoundTrips) {
  // Random mixes of ASCII, whitespace runs, multi-byte characters and stray or truncated
  // UTF-8 bytes: both tokenizers are lossless (byte fallback / byte-level symbols), so
  // Decode(Encode(x)) == x. Bytes that never occur in UTF-8 (C0, C1, F5..FF) are left out:
  // byte-level vocabs may lack their symbols (falcon) or hold them as user-defined tokens
  // that decode as text (deepseek's "ÿ"), as in Hugging Face, which only takes valid UTF-8.
  const std::string name = GetParam().name;
  auto file = gguf::GgufFile::Open((kVocabDir / ("ggml-vocab-" + name + ".gguf")).string());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tok = Tokenizer::FromGguf(**file);
  auto model = (*file)->GetString("tokenizer.ggml.model");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  if (*model != "llama" && *model != "gpt2") {  // WordPiece: refused by name (see above), nothing to round-trip
    ASSERT_FALSE(tok.ok());
    EXPECT_EQ(tok.status().code(), StatusCode::kUnsupported);
    return;
  }
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  static const char* kPieces[] = {"a", "Z", "the", " ", "  ", "\n", "\r\n", "\t", "'s", "42", "1234567", ".", "!!",
                                  "\xC3\xA9", "\xE2\x96\x81", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\xA6\x99",
                                  "\xE2\x80\x94", "\xC2\xA0", "\xE3\x80\x80", "\x80", "\xC3", "\x01", "<", "|>"};
  std::mt19937 rng(1234);
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int k = 0; k < n; ++k) {
      const std::string_view piece = kPieces[rng() % std::size(kPieces)];
      // SPM spells spaces as "▁", so a literal "▁" decodes as a space (as in SentencePiece).
      if (piece == "\xE2\x96\x81" && (*tok)->model_name() == "llama") continue;
      text += piece;
    }
    const auto ids = (*tok)->Encode(text, false, false);
    ASSERT_EQ((*tok)->Decode(ids, false), text) << name << " input \"" << Printable(text) << "\"";
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, ConformanceTest, ::testing::ValuesIn(VocabsWithTests()),
                         [](const ::testing::TestParamInfo<VocabCase>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(ConformanceFiles, AllPairsPresent) {
  // Guards against a silently empty parameter list (e.g. a wrong shared dir).
  EXPECT_GE(VocabsWithTests().size(), 10u) << "expected the vocab test pairs in " << kVocabDir;
}

}  // namespace
}  // namespace radixserve
