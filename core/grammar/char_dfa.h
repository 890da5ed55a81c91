// CharDfa: a deterministic automaton over Unicode code points, for the JSON Schema compiler's
// string constraints that a grammar alone cannot combine.
//
// A context-free grammar cannot intersect or complement, but JSON Schema needs both on strings:
// a `pattern` together with `minLength`/`maxLength`, a `format`, `not: {enum: [...]}`, and object
// keys, which must match some `patternProperties` regexes and no others and must differ from
// every listed property name. Over a DFA these are product constructions. So the compiler turns
// such string constraints into CharDfas (FromRegex reads the ECMAScript subset that regex.h
// documents, but where ECMAScript and Python's re differ on text a model can write, it follows
// Python, the reference validator that generated strings must pass: \s includes U+001C..U+001F
// and U+0085 and not U+FEFF, `.` is anything but \n, `$` may also match before a final \n),
// combines them, and writes the result into the
// grammar once, as the JSON text of a string whose decoded content the DFA accepts
// (EmitJsonString). Plain patterns with nothing to combine go to regex.h's AddRegex instead.
//
// A CharDfa is always trimmed (every state is reachable and can reach acceptance, so the grammar
// it becomes has no dead ends) and minimal. Surrogates (D800-DFFF) are not code points here.
//
// Thread-safety: values; const methods are safe to call concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/grammar/codepoint_util.h"
#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar::internal {

// FNV-1a over a set of NFA states (or a column of them): the key of the subset constructions'
// state-id maps (char_dfa.cc, char_dfa_regex.cc).
struct StateSetHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

class CharDfa {
 public:
  struct Edge {
    uint32_t lo, hi;  // inclusive code-point range
    uint32_t to;
  };
  struct State {
    bool accept = false;
    std::vector<Edge> edges;  // sorted by lo, disjoint
  };

  // The empty language (one non-accepting state without edges).
  CharDfa();
  static CharDfa AnyString();
  // Exactly the given strings (code points).
  static CharDfa Literals(const std::vector<std::u32string>& strings);
  // Any string whose length in code points is in [min, max] (max < 0: unbounded).
  static CharDfa Length(int64_t min, int64_t max);
  // The strings `pattern` matches (an ECMAScript regex, see regex.h for the subset): anywhere in
  // the string when `search` (JSON Schema's `pattern`), else the whole string. Unsupported
  // constructs: Status::Unsupported; malformed patterns: InvalidArgument; more than
  // `max_states` DFA states: ResourceExhausted.
  // `keep_going` (optional) is polled while states are built; returning false stops the
  // construction with ResourceExhausted (the compile's deadline). `python_dollar`: `$` also
  // matches before a final \n, as in Python's re; false: only at the end, as in ECMAScript (a
  // subset of the strings, and a smaller automaton once a length bound multiplies it).
  static Result<CharDfa> FromRegex(std::string_view pattern, bool search, size_t max_states,
                                   size_t max_repeat = 10000, const std::function<bool()>& keep_going = {},
                                   bool python_dollar = true);

  enum class Op { kAnd, kOr, kMinus };
  // `minimize` false: trim only (a product with a length counter is nearly minimal already, and
  // minimizing its long chains costs a pass per link).
  static Result<CharDfa> Combine(const CharDfa& a, const CharDfa& b, Op op, size_t max_states, bool minimize = true,
                                 const std::function<bool()>& keep_going = {});
  CharDfa Complement() const;

  bool IsEmpty() const { return states_.size() == 1 && !states_[0].accept && states_[0].edges.empty(); }
  // Accepts every string.
  bool IsUniversal() const;
  bool Matches(std::u32string_view s) const;
  // One shortest accepted string (the DFA must not be empty).
  std::u32string Example() const;
  // The length of the longest accepted string, or -1 when there is no longest (a cycle).
  int64_t LongestLength() const;
  // Every accepted string when the language is finite and has at most `max` strings.
  std::optional<std::vector<std::u32string>> FiniteStrings(size_t max) const;
  const std::vector<State>& states() const { return states_; }
  size_t size() const { return states_.size(); }

  // Builds from raw states (start = 0; edges need not be sorted or merged), then trims and
  // minimizes.
  static CharDfa FromStates(std::vector<State> states);

 private:
  void Normalize(bool minimize = true);
  void Minimize(const std::vector<uint32_t>& keep, const std::vector<char>& live, std::vector<uint32_t>* cls,
                size_t* count) const;
  std::vector<State> states_;  // start is 0
};

// Writes DFAs into a builder as JSON string text. Each code point the DFA accepts is spelled as
// regex.h's kJsonString spells it: `"`, `\` and U+0000..U+001F only escaped (`\"`, `\\`,
// `\b \f \n \r \t`, or `\u00XX` in either hex case), `/` raw or as `\/`, every other code point
// as raw UTF-8. One emitter per builder: it caches the character-class rules it makes.
class JsonStringEmitter {
 public:
  explicit JsonStringEmitter(GrammarBuilder* b) : b_(b) {}
  // The symbol of `"` content `"`, content accepted by `dfa` (which must not be empty).
  Symbol Emit(const CharDfa& dfa, std::string_view name);
  // One code point of `set` in its JSON spellings (set normalized, not empty).
  Symbol Class(const CpRanges& set);

 private:
  GrammarBuilder* b_;
  std::map<CpRanges, Symbol> classes_;
};

// Edges to `to` on every code point a CharDfa reads (all of Unicode but the surrogates).
std::vector<CharDfa::Edge> UniverseEdges(uint32_t to);

// UTF-8 to code points; false when `s` is not valid UTF-8.
bool DecodeUtf8String(std::string_view s, std::u32string* out);

}  // namespace radixserve::grammar::internal
