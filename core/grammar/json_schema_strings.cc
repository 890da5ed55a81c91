// JSON Schema front-end: strings (plain ones as a repetition of JSON string characters, the
// others as one automaton of all their constraints) and bounded repetition in blocks.
#include <algorithm>
#include <functional>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"
#include "core/grammar/regex.h"

namespace radixserve::grammar::internal {

Symbol SchemaCompiler::StringChar() {
  if (string_char_) return *string_char_;
  GrammarBuilder& b = *b_;
  const Symbol raw = b.CodepointRanges({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}}, "chr");
  ByteSet simple;
  for (char c : std::string("\"\\/bfnrt")) simple.Add(static_cast<uint8_t>(c));
  ByteSet hex;
  hex.AddRange('0', '9');
  hex.AddRange('a', 'f');
  hex.AddRange('A', 'F');
  ByteSet not_d = hex;
  not_d.Remove('d');
  not_d.Remove('D');
  ByteSet d;
  d.Add('d');
  d.Add('D');
  ByteSet low_half = ByteSet::Range('0', '7');
  ByteSet high_sur;  // 8-B
  for (char c : std::string("89abAB")) high_sur.Add(static_cast<uint8_t>(c));
  ByteSet low_sur;  // C-F
  for (char c : std::string("cdefCDEF")) low_sur.Add(static_cast<uint8_t>(c));
  const Symbol h = b.Bytes(hex);
  const Symbol u = b.Byte('u');
  const Symbol bs = b.Byte('\\');
  // \u: a code point outside the surrogates, or a surrogate pair.
  const Symbol esc = b.Choice({{b.Bytes(simple)},
                               {u, b.Bytes(not_d), h, h, h},
                               {u, b.Bytes(d), b.Bytes(low_half), h, h},
                               {u, b.Bytes(d), b.Bytes(high_sur), h, h, bs, u, b.Bytes(d), b.Bytes(low_sur), h, h}},
                              "esc");
  string_char_ = b.Choice({{raw}, {bs, esc}}, "char");
  return *string_char_;
}


Symbol SchemaCompiler::Repeat(const Sequence& item, int64_t min, int64_t max, std::string_view name) {
  GrammarBuilder& b = *b_;
  const int64_t cap = static_cast<int64_t>(b.limits().max_repeat);
  if (min <= cap && max <= cap) return b.Repeat(item, min, max, name);
  // Blocks: block[j] is exactly 64^j items.
  constexpr int64_t kBase = 64;
  std::vector<Symbol> block{item.size() == 1 ? item[0] : b.Choice({item}, name)};
  auto block_at = [&](size_t j) {
    while (block.size() <= j) block.push_back(b.Choice({Sequence(kBase, block.back())}, "block"));
    return block[j];
  };
  // Exactly n items: the base-64 digits of n, most significant first.
  auto exactly = [&](int64_t n) {
    Sequence seq;
    std::vector<int64_t> digits;
    for (int64_t x = n; x > 0; x /= kBase) digits.push_back(x % kBase);
    for (size_t j = digits.size(); j-- > 0;)
      for (int64_t d = 0; d < digits[j]; ++d) seq.push_back(block_at(j));
    return seq;
  };
  // below[j]: any count in [0, 64^j - 1].
  std::vector<Symbol> below{b.Empty()};
  auto below_at = [&](size_t j) {
    while (below.size() <= j) {
      const size_t k = below.size();
      below.push_back(b.Choice({{b.Repeat({block_at(k - 1)}, 0, kBase - 1, "blocks"), below[k - 1]}}, "below"));
    }
    return below[j];
  };
  // At most n items: fewer top blocks and anything below, or all of them and at most the rest.
  std::function<Symbol(int64_t)> up_to = [&](int64_t n) -> Symbol {
    if (n < kBase) return b.Repeat(item, 0, n, name);
    size_t m = 0;
    int64_t p = 1;
    while (p <= n / kBase) p *= kBase, ++m;
    const int64_t top = n / p;
    std::vector<Sequence> alts;
    alts.push_back({b.Repeat({block_at(m)}, 0, top - 1, "blocks"), below_at(m)});
    Sequence full(static_cast<size_t>(top), block_at(m));
    full.push_back(up_to(n % p));
    alts.push_back(std::move(full));
    return b.Choice(std::move(alts), "upto");
  };
  Sequence seq = exactly(min);
  if (max < 0) {
    seq.push_back(b.Star(item, name));
  } else {
    seq.push_back(up_to(max - min));
  }
  return b.Choice({seq}, name);
}


Symbol SchemaCompiler::PlainString() {
  if (!plain_string_) {
    GrammarBuilder& b = *b_;
    const Symbol chars = b.Star({StringChar()}, "chars");
    plain_string_ = b.Choice({{b.Byte('"'), chars, b.Byte('"')}}, "string");
  }
  return *plain_string_;
}


Result<const CharDfa*> SchemaCompiler::PatternDfa(const std::string& pattern, const std::string& path, bool exact) {
  const std::string key = (exact ? "e" : "p") + pattern;
  auto it = pattern_cache_.find(key);
  if (it != pattern_cache_.end()) return it->second.get();
  auto err = pattern_errors_.find(key);
  Status status;
  if (err == pattern_errors_.end()) {
    const size_t cap = std::min<size_t>(20000, std::max<size_t>(1000, b_->limits().max_symbols / 50));
    auto dfa = CharDfa::FromRegex(pattern, /*search=*/true, cap, b_->limits().max_repeat, keep_going_, exact);
    if (dfa.ok()) {
      auto p = std::make_unique<CharDfa>(std::move(dfa).value());
      const CharDfa* out = p.get();
      pattern_cache_.emplace(key, std::move(p));
      return out;
    }
    status = dfa.status();
    pattern_errors_.emplace(key, status);
  } else {
    status = err->second;
  }
  if (status.code() == StatusCode::kUnsupported)
    return Fail(StatusCode::kUnsupported, path, "the regex '" + pattern + "' uses an unsupported construct: " + status.message());
  return Fail(status.code(), path, "the regex '" + pattern + "': " + status.message());
}

Result<CharDfa> SchemaCompiler::StringDfa(const StringIr& s, const std::string& path, bool exact) {
  const size_t cap = std::min<size_t>(50000, std::max<size_t>(1000, b_->limits().max_symbols / 20));
  CharDfa d = CharDfa::AnyString();
  auto combine = [&](const CharDfa& other, CharDfa::Op op, const std::string& where, bool minimize = true) -> Status {
    auto r = CharDfa::Combine(d, other, op, cap, minimize, keep_going_);
    if (!r.ok())
      return Fail(r.status().code(), where, "the string constraints together are too large: " + r.status().message());
    d = std::move(r).value();
    return Status::Ok();
  };
  for (const auto& [p, ppath] : s.patterns) {
    RS_ASSIGN_OR_RETURN(const CharDfa* pd, PatternDfa(p, ppath, exact));
    RS_RETURN_IF_ERROR(combine(*pd, CharDfa::Op::kAnd, ppath));
  }
  for (const auto& [f, fpath] : s.formats) {
    const CharDfa* fd = FormatDfa(f);
    if (!fd) return Fail(StatusCode::kInternal, fpath, "format automaton missing");
    RS_RETURN_IF_ERROR(combine(*fd, CharDfa::Op::kAnd, fpath));
  }
  for (const auto& [p, ppath] : s.not_patterns) {
    RS_ASSIGN_OR_RETURN(const CharDfa* pd, PatternDfa(p, ppath));
    RS_RETURN_IF_ERROR(combine(*pd, CharDfa::Op::kMinus, ppath));
  }
  for (const auto& [f, fpath] : s.not_formats) {
    const CharDfa* fd = FormatDfa(f);
    if (!fd) return Fail(StatusCode::kInternal, fpath, "format automaton missing");
    RS_RETURN_IF_ERROR(combine(*fd, CharDfa::Op::kMinus, fpath));
  }
  if (!s.excluded.empty()) RS_RETURN_IF_ERROR(combine(CharDfa::Literals(s.excluded), CharDfa::Op::kMinus, path));
  // Length bounds that the other constraints already imply cost nothing (a date is 10 long).
  const int64_t longest = d.LongestLength();
  const bool max_implied = s.max_len < 0 || (longest >= 0 && longest <= s.max_len);
  const bool min_implied = s.min_len == 0 || static_cast<int64_t>(d.Example().size()) >= s.min_len;
  if (!max_implied || !min_implied) {
    if (static_cast<uint64_t>(std::max(s.min_len, s.max_len)) > b_->limits().max_repeat)
      return Fail(StatusCode::kResourceExhausted, s.len_path,
                  "a length bound over " + std::to_string(b_->limits().max_repeat) +
                      " together with a pattern, format or excluded values is over the cap");
    RS_RETURN_IF_ERROR(combine(CharDfa::Length(s.min_len, s.max_len), CharDfa::Op::kAnd, s.len_path, false));
  }
  return d;
}

Result<std::optional<Symbol>> SchemaCompiler::EmitString(const StringIr& s, const std::string& path) {
  GrammarBuilder& b = *b_;
  if (s.max_len >= 0 && s.min_len > s.max_len) {
    NoteUnsat(s.len_path + ": minLength " + std::to_string(s.min_len) + " is above maxLength " + std::to_string(s.max_len));
    return std::optional<Symbol>();
  }
  const bool automaton = !s.patterns.empty() || !s.formats.empty() || !s.not_patterns.empty() ||
                         !s.not_formats.empty() || !s.excluded.empty();
  if (!automaton) {
    if (s.min_len == 0 && s.max_len < 0) return std::optional<Symbol>(PlainString());
    const Symbol rep = Repeat({StringChar()}, s.min_len, s.max_len, "chars");
    return std::optional<Symbol>(b.Choice({{b.Byte('"'), rep, b.Byte('"')}}, "string"));
  }
  // The same string constraints (a pattern on many properties) make one rule.
  std::string key = std::to_string(s.min_len) + "," + std::to_string(s.max_len);
  for (const auto* list : {&s.patterns, &s.formats, &s.not_patterns, &s.not_formats}) {
    key += "|";
    for (const auto& [x, p] : *list) key += std::to_string(x.size()) + ":" + x;
  }
  for (const auto& x : s.excluded) {
    key += "|";
    for (char32_t c : x) key += std::to_string(static_cast<uint32_t>(c)) + ".";
  }
  if (auto it = string_cache_.find(key); it != string_cache_.end()) return it->second;
  auto dfa = StringDfa(s, path);
  if (!dfa.ok()) {
    // A lone pattern our automata cannot read may still be one regex.h compiles.
    const bool lone = s.patterns.size() == 1 && s.formats.empty() && s.not_patterns.empty() && s.not_formats.empty() &&
                      s.excluded.empty() && s.min_len == 0 && s.max_len < 0;
    if (!lone) return dfa.status();
    auto sym = AddRegex(b, s.patterns[0].first, RegexContext::kJsonString, /*search_semantics=*/true);
    if (!sym.ok()) return Fail(sym.status().code(), s.patterns[0].second, "'pattern': " + sym.status().message());
    return std::optional<Symbol>(b.Choice({{b.Byte('"'), *sym, b.Byte('"')}}, "string"));
  }
  if (dfa->IsEmpty()) {
    NoteUnsat(path + ": no string satisfies the pattern, format, length and excluded values together");
    string_cache_[key] = std::nullopt;
    return std::optional<Symbol>();
  }
  const Symbol sym = strings_->Emit(*dfa, "str");
  string_cache_[key] = sym;
  return std::optional<Symbol>(sym);
}

}  // namespace radixserve::grammar::internal
