#include "core/tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/tokenizer/unicode.h"

namespace radixserve::tokenizer {
namespace {

// Decoded text: code points and their category flags, indexed alike.
struct Text {
  const uint32_t* cp;
  const uint16_t* fl;
  bool Is(size_t i, uint16_t mask) const { return (fl[i] & mask) != 0; }
};

constexpr uint16_t kLN = kLetter | kNumber;
constexpr uint16_t kWsLN = kWhitespace | kLetter | kNumber;

// A matcher returns the length (in code points) of the regex match that starts exactly
// at i within the piece ending at e, or 0 when the regex has no match starting at i.
using MatchFn = size_t (*)(const Text& t, size_t i, size_t e);

bool IsNewline(uint32_t c) { return c == '\r' || c == '\n'; }
uint32_t AsciiLower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

size_t RunOf(const Text& t, size_t j, size_t e, uint16_t mask) {
  while (j < e && t.Is(j, mask)) ++j;
  return j;
}

size_t RunOfNot(const Text& t, size_t j, size_t e, uint16_t mask) {
  while (j < e && !t.Is(j, mask)) ++j;
  return j;
}

// Length of the run of code points from i that satisfy `in`.
template <typename Pred>
size_t RunIf(const Text& t, size_t i, size_t e, Pred in) {
  size_t j = i;
  while (j < e && in(t, j)) ++j;
  return j - i;
}

// '\s+(?!\S)|\s+' at a whitespace code point: a run that is followed by a non-space gives
// its last space to the next word (so " word" keeps its space), unless it is one space.
size_t WhitespaceRun(const Text& t, size_t i, size_t e) {
  const size_t k = RunOf(t, i, e, kWhitespace);
  if (k == e || k - i == 1) return k - i;
  return k - i - 1;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at j: its length, or 0. Unicode case folding adds one
// non-ASCII match: U+017F (long s) folds to 's'.
size_t ContractionAt(const Text& t, size_t j, size_t e) {
  if (j + 1 >= e || t.cp[j] != '\'') return 0;
  const uint32_t c1 = t.cp[j + 1] == 0x17F ? 's' : AsciiLower(t.cp[j + 1]);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
  if (j + 2 < e) {
    const uint32_t c2 = AsciiLower(t.cp[j + 2]);
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
  }
  return 0;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t MatchGpt2(const Text& t, size_t i, size_t e) {
  const uint32_t c = t.cp[i];
  if (c == '\'' && i + 1 < e) {
    const uint32_t c1 = t.cp[i + 1];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
    if (i + 2 < e) {
      const uint32_t c2 = t.cp[i + 2];
      if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
    }
  }
  const size_t j = i + (c == ' ' ? 1 : 0);  // the optional leading space
  if (j < e) {
    if (t.Is(j, kLetter)) return RunOf(t, j + 1, e, kLetter) - i;
    if (t.Is(j, kNumber)) return RunOf(t, j + 1, e, kNumber) - i;
    if (!t.Is(j, kWsLN)) return RunOfNot(t, j + 1, e, kWsLN) - i;
  }
  if (t.Is(i, kWhitespace)) return WhitespaceRun(t, i, e);
  return 1;  // not reached: every code point is a letter, number, space or "other"
}

// Llama 3 (kMaxDigits 3) and Qwen2 (1):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+
template <size_t kMaxDigits>
size_t MatchLlama3(const Text& t, size_t i, size_t e) {
  const uint32_t c = t.cp[i];
  if (const size_t n = ContractionAt(t, i, e)) return n;
  if (!t.Is(i, kLN) && !IsNewline(c) && i + 1 < e && t.Is(i + 1, kLetter)) {
    return RunOf(t, i + 2, e, kLetter) - i;
  }
  if (t.Is(i, kLetter)) return RunOf(t, i + 1, e, kLetter) - i;
  if (t.Is(i, kNumber)) {
    size_t j = i + 1;
    while (j < e && j - i < kMaxDigits && t.Is(j, kNumber)) ++j;
    return j - i;
  }
  size_t j = i + (c == ' ' ? 1 : 0);
  if (j < e && !t.Is(j, kWsLN)) {
    j = RunOfNot(t, j + 1, e, kWsLN);
    while (j < e && IsNewline(t.cp[j])) ++j;
    return j - i;
  }
  if (t.Is(i, kWhitespace)) {
    // \s*[\r\n]+ : greedy \s* backs off to the last newline of the run.
    const size_t k = RunOf(t, i, e, kWhitespace);
    for (size_t p = k; p > i; --p) {
      if (IsNewline(t.cp[p - 1])) return p - i;
    }
    return WhitespaceRun(t, i, e);
  }
  return 1;
}

// GPT-4o (o200k_base), with UP = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// LOW = [\p{Ll}\p{Lm}\p{Lo}\p{M}] and C = (?i:'s|'t|'re|'ve|'m|'ll|'d):
//   [^\r\n\p{L}\p{N}]?UP*LOW+C? | [^\r\n\p{L}\p{N}]?UP+LOW*C? | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* |
//   \s*[\r\n]+ | \s+(?!\S) | \s+
// Lm, Lo and marks are in both classes; a mark is also in [^\r\n\p{L}\p{N}].
bool IsGpt4oUpper(const Text& t, size_t k) {
  return t.Is(k, kMark) || (t.Is(k, kLetter) && !t.Is(k, kLower));
}
bool IsGpt4oLower(const Text& t, size_t k) {
  return t.Is(k, kMark) || (t.Is(k, kLetter) && !t.Is(k, kUpperOrTitle));
}

size_t MatchGpt4o(const Text& t, size_t i, size_t e) {
  const uint32_t c = t.cp[i];
  // The optional leading [^\r\n\p{L}\p{N}] is tried taken (word starts at i + 1) before
  // skipped (word starts at i); skipping only helps when t[i] is a mark, i.e. also in UP and LOW.
  const bool lead = !t.Is(i, kLN) && !IsNewline(c);
  const size_t starts[2] = {i + 1, i};
  for (size_t s = lead ? 0 : 1; s < 2; ++s) {
    // Alternative 1: UP* runs to a, then gives back code points until LOW+ can start, so LOW+
    // starts at the last p in [j, a] that is in LOW. If p < a, t[p + 1] is not in LOW and the
    // LOW run is just t[p]; otherwise it continues past a.
    const size_t j = starts[s];
    if (j >= e) continue;
    const size_t a = j + RunIf(t, j, e, IsGpt4oUpper);
    for (size_t p = a + 1; p-- > j;) {
      if (p < e && IsGpt4oLower(t, p)) {
        const size_t end = p + RunIf(t, p, e, IsGpt4oLower);
        return end + ContractionAt(t, end, e) - i;
      }
    }
  }
  for (size_t s = lead ? 0 : 1; s < 2; ++s) {
    // Alternative 2: UP+ LOW* C? (here no LOW follows the UP run, or alternative 1 matched).
    const size_t j = starts[s];
    if (j >= e || !IsGpt4oUpper(t, j)) continue;
    const size_t a = j + RunIf(t, j, e, IsGpt4oUpper);
    const size_t end = a + RunIf(t, a, e, IsGpt4oLower);
    return end + ContractionAt(t, end, e) - i;
  }
  if (t.Is(i, kNumber)) {
    size_t j = i + 1;
    while (j < e && j - i < 3 && t.Is(j, kNumber)) ++j;
    return j - i;
  }
  size_t j = i + (c == ' ' ? 1 : 0);
  if (j < e && !t.Is(j, kWsLN)) {
    j = RunOfNot(t, j + 1, e, kWsLN);
    while (j < e && (IsNewline(t.cp[j]) || t.cp[j] == '/')) ++j;
    return j - i;
  }
  if (t.Is(i, kWhitespace)) {
    // \s*[\r\n]+ : greedy \s* backs off to the last newline of the run.
    const size_t k = RunOf(t, i, e, kWhitespace);
    for (size_t p = k; p > i; --p) {
      if (IsNewline(t.cp[p - 1])) return p - i;
    }
    return WhitespaceRun(t, i, e);
  }
  return 1;  // not reached: letters match alternative 1 or 2, numbers 3, other code points 4
}

// Optional single whitespace followed by a run of code points satisfying `in`: \s?[X]+
template <typename Pred>
size_t OptionalSpaceThenRun(const Text& t, size_t i, size_t e, Pred in) {
  size_t j;
  if (t.Is(i, kWhitespace) && i + 1 < e && in(t, i + 1)) {
    j = i + 2;
  } else if (in(t, i)) {
    j = i + 1;
  } else {
    return 0;
  }
  while (j < e && in(t, j)) ++j;
  return j - i;
}

// [\r\n]
size_t MatchNewline(const Text& t, size_t i, size_t) { return IsNewline(t.cp[i]) ? 1 : 0; }
// \p{N}
size_t MatchOneNumber(const Text& t, size_t i, size_t) { return t.Is(i, kNumber) ? 1 : 0; }
// \p{N}+
size_t MatchNumbers(const Text& t, size_t i, size_t e) { return RunOf(t, i, e, kNumber) - i; }
// [0-9][0-9][0-9]
size_t MatchThreeAsciiDigits(const Text& t, size_t i, size_t e) {
  auto d = [&](size_t k) { return t.cp[k] >= '0' && t.cp[k] <= '9'; };
  return (i + 2 < e && d(i) && d(i + 1) && d(i + 2)) ? 3 : 0;
}
// [\p{P}\$\+<=>\^~\|`]+ : Unicode punctuation plus the ASCII symbols that Hugging Face's
// Punctuation pre-tokenizer also counts (it uses is_ascii_punctuation).
size_t MatchPunctuationRun(const Text& t, size_t i, size_t e) {
  return RunIf(t, i, e, [](const Text& x, size_t k) {
    const uint32_t c = x.cp[k];
    return x.Is(k, kPunctuation) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' ||
           c == '~' || c == '|' || c == '`';
  });
}

// [一-龥ࠀ-一가-퟿]+ (CJK ideographs, U+0800..U+4E00, Hangul syllables and jamo extension).
bool IsDeepseekCjk(const Text& t, size_t k) {
  const uint32_t c = t.cp[k];
  return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x0800 && c <= 0x4E00) || (c >= 0xAC00 && c <= 0xD7FF);
}
size_t MatchCjk(const Text& t, size_t i, size_t e) { return RunIf(t, i, e, IsDeepseekCjk); }

// The cased-letter class that deepseek-llm's tokenizer spells out code point range by range
// (it equals \p{Lu}|\p{Ll}|\p{Lt} of an older Unicode version, so it is kept verbatim).
constexpr std::array<std::pair<uint32_t, uint32_t>, 84> kDeepseekLetterRanges = {{
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},       {0xD8, 0xF6},
    {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},     {0x295, 0x2AF},     {0x370, 0x373},
    {0x376, 0x377},     {0x37B, 0x37D},     {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},
    {0x38C, 0x38C},     {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
}};

bool IsDeepseekLetter(const Text& t, size_t k) {
  const uint32_t c = t.cp[k];
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  auto it = std::upper_bound(kDeepseekLetterRanges.begin(), kDeepseekLetterRanges.end(), c,
                             [](uint32_t v, const std::pair<uint32_t, uint32_t>& r) { return v < r.first; });
  return it != kDeepseekLetterRanges.begin() && c <= (it - 1)->second;
}

// [!-/:-~！-／：-～‘-‟　-。] : ASCII punctuation and symbols, their full-width forms,
// curly quotes, and the ideographic space, comma and full stop.
bool IsDeepseekPunct(const Text& t, size_t k) {
  const uint32_t c = t.cp[k];
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x7E) || (c >= 0xFF01 && c <= 0xFF0F) ||
         (c >= 0xFF1A && c <= 0xFF5E) || (c >= 0x2018 && c <= 0x201F) || (c >= 0x3000 && c <= 0x3002);
}

// \s?[cased letters]+
size_t MatchDeepseekLlmLetters(const Text& t, size_t i, size_t e) {
  return OptionalSpaceThenRun(t, i, e, IsDeepseekLetter);
}
// \s?[!-/:-~！-／：-～‘-‟　-。]+
size_t MatchDeepseekLlmPunct(const Text& t, size_t i, size_t e) {
  return OptionalSpaceThenRun(t, i, e, IsDeepseekPunct);
}
// \s+$ : whitespace that runs to the end of the piece.
size_t MatchTrailingWhitespace(const Text& t, size_t i, size_t e) {
  if (!t.Is(i, kWhitespace)) return 0;
  return RunOf(t, i, e, kWhitespace) == e ? e - i : 0;
}
// \s?\p{L}+
size_t MatchSpaceLetters(const Text& t, size_t i, size_t e) {
  return OptionalSpaceThenRun(t, i, e, [](const Text& x, size_t k) { return x.Is(k, kLetter); });
}
// \s?\p{P}+
size_t MatchSpacePunct(const Text& t, size_t i, size_t e) {
  return OptionalSpaceThenRun(t, i, e, [](const Text& x, size_t k) { return x.Is(k, kPunctuation); });
}

struct Passes {
  const MatchFn* fns;
  size_t count;
};

Passes PassesFor(PreTokenizerKind kind) {
  static constexpr MatchFn kDefault[] = {MatchPunctuationRun, MatchGpt2, MatchNumbers, MatchThreeAsciiDigits};
  static constexpr MatchFn kGpt2[] = {MatchGpt2};
  static constexpr MatchFn kLlama3[] = {MatchLlama3<3>};
  static constexpr MatchFn kQwen2[] = {MatchLlama3<1>};
  static constexpr MatchFn kGpt4o[] = {MatchGpt4o};
  static constexpr MatchFn kDeepseekLlm[] = {MatchNewline, MatchDeepseekLlmLetters, MatchDeepseekLlmPunct,
                                             MatchTrailingWhitespace, MatchCjk, MatchNumbers};
  static constexpr MatchFn kDeepseekCoder[] = {MatchNewline, MatchSpaceLetters, MatchSpacePunct, MatchCjk,
                                               MatchOneNumber};
  static constexpr MatchFn kFalcon[] = {MatchPunctuationRun, MatchGpt2, MatchThreeAsciiDigits};
  static constexpr MatchFn kStarcoder[] = {MatchOneNumber, MatchGpt2};
  switch (kind) {
    case PreTokenizerKind::kDefault: return {kDefault, std::size(kDefault)};
    case PreTokenizerKind::kGpt2: return {kGpt2, std::size(kGpt2)};
    case PreTokenizerKind::kLlama3: return {kLlama3, std::size(kLlama3)};
    case PreTokenizerKind::kQwen2: return {kQwen2, std::size(kQwen2)};
    case PreTokenizerKind::kGpt4o: return {kGpt4o, std::size(kGpt4o)};
    case PreTokenizerKind::kDeepseekLlm: return {kDeepseekLlm, std::size(kDeepseekLlm)};
    case PreTokenizerKind::kDeepseekCoder: return {kDeepseekCoder, std::size(kDeepseekCoder)};
    case PreTokenizerKind::kFalcon: return {kFalcon, std::size(kFalcon)};
    case PreTokenizerKind::kStarcoder: return {kStarcoder, std::size(kStarcoder)};
  }
  return {kGpt2, std::size(kGpt2)};
}

// One pass: every piece is cut into matches and the unmatched stretches between them.
void ApplyPass(MatchFn fn, const Text& t, const std::vector<PreTokenizer::Word>& in,
               std::vector<PreTokenizer::Word>* out) {
  out->clear();
  for (const auto& [b, e] : in) {
    size_t gap = b;
    size_t i = b;
    while (i < e) {
      const size_t n = fn(t, i, e);
      if (n == 0) {
        ++i;
        continue;
      }
      if (gap < i) out->emplace_back(gap, i);
      out->emplace_back(i, i + n);
      i += n;
      gap = i;
    }
    if (gap < e) out->emplace_back(gap, e);
  }
}

}  // namespace

Result<PreTokenizerKind> PreTokenizerKindFromName(std::string_view pre) {
  static constexpr std::pair<std::string_view, PreTokenizerKind> kNames[] = {
      {"", PreTokenizerKind::kDefault},           {"default", PreTokenizerKind::kDefault},
      {"gpt-2", PreTokenizerKind::kGpt2},         {"gpt2", PreTokenizerKind::kGpt2},
      {"phi-2", PreTokenizerKind::kGpt2},         {"mpt", PreTokenizerKind::kGpt2},
      {"olmo", PreTokenizerKind::kGpt2},          {"jais", PreTokenizerKind::kGpt2},
      {"jina-es", PreTokenizerKind::kGpt2},       {"jina-de", PreTokenizerKind::kGpt2},
      {"jina-v1-en", PreTokenizerKind::kGpt2},    {"jina-v2-es", PreTokenizerKind::kGpt2},
      {"jina-v2-de", PreTokenizerKind::kGpt2},    {"jina-v2-code", PreTokenizerKind::kGpt2},
      {"roberta-bpe", PreTokenizerKind::kGpt2},   {"gigachat", PreTokenizerKind::kGpt2},
      {"trillion", PreTokenizerKind::kGpt2},      {"llama3", PreTokenizerKind::kLlama3},
      {"llama-v3", PreTokenizerKind::kLlama3},    {"llama-bpe", PreTokenizerKind::kLlama3},
      {"falcon3", PreTokenizerKind::kLlama3},     {"falcon-h1", PreTokenizerKind::kLlama3},
      {"pixtral", PreTokenizerKind::kLlama3},     {"dbrx", PreTokenizerKind::kLlama3},
      {"smaug-bpe", PreTokenizerKind::kLlama3},   {"qwen2", PreTokenizerKind::kQwen2},
      {"deepseek-r1-qwen", PreTokenizerKind::kQwen2}, {"stablelm2", PreTokenizerKind::kQwen2},
      {"gpt-4o", PreTokenizerKind::kGpt4o},       {"llama4", PreTokenizerKind::kGpt4o},
      {"deepseek-llm", PreTokenizerKind::kDeepseekLlm},
      {"deepseek-coder", PreTokenizerKind::kDeepseekCoder},
      {"falcon", PreTokenizerKind::kFalcon},      {"starcoder", PreTokenizerKind::kStarcoder},
      {"refact", PreTokenizerKind::kStarcoder},   {"command-r", PreTokenizerKind::kStarcoder},
      {"smollm", PreTokenizerKind::kStarcoder},   {"codeshell", PreTokenizerKind::kStarcoder},
  };
  for (const auto& [name, kind] : kNames) {
    if (name == pre) return kind;
  }
  return Status::Unsupported("unsupported BPE pre-tokenizer '" + std::string(pre) + "' (tokenizer.ggml.pre)");
}

std::string_view PreTokenizerKindName(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::kDefault: return "default";
    case PreTokenizerKind::kGpt2: return "gpt2";
    case PreTokenizerKind::kLlama3: return "llama3";
    case PreTokenizerKind::kQwen2: return "qwen2";
    case PreTokenizerKind::kGpt4o: return "gpt-4o";
    case PreTokenizerKind::kDeepseekLlm: return "deepseek-llm";
    case PreTokenizerKind::kDeepseekCoder: return "deepseek-coder";
    case PreTokenizerKind::kFalcon: return "falcon";
    case PreTokenizerKind::kStarcoder: return "starcoder";
  }
  return "?";
}

void PreTokenizer::Split(std::string_view text, std::vector<Word>* words) const {
  words->clear();
  if (text.empty()) return;
  std::vector<uint32_t> cps;
  std::vector<uint32_t> offsets;
  DecodeUtf8All(text, &cps, &offsets);
  std::vector<uint16_t> flags(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) flags[i] = CodepointFlagsOf(cps[i]);
  const Text t{cps.data(), flags.data()};

  // Passes work on code point indices; the result is converted to byte offsets at the end.
  std::vector<Word> cur{{0, static_cast<uint32_t>(cps.size())}};
  std::vector<Word> next;
  const Passes passes = PassesFor(kind_);
  for (size_t p = 0; p < passes.count; ++p) {
    ApplyPass(passes.fns[p], t, cur, &next);
    cur.swap(next);
  }
  words->reserve(cur.size());
  for (const auto& [b, e] : cur) words->emplace_back(offsets[b], offsets[e]);
}

}  // namespace radixserve::tokenizer
