// Grammar: the one internal form every structured-output front-end compiles to.
//
// A context-free grammar over bytes: each rule is a list of alternatives, each alternative a
// sequence of symbols, and a symbol is either a byte set (one byte from the set) or a reference
// to a rule. Unicode is handled by the front-ends, which spell code points as UTF-8 byte
// sequences (GrammarBuilder::CodepointRanges). Recursion is allowed except left recursion (direct
// or through nullable prefixes), which GrammarBuilder::Finish refuses: the matcher is a
// pushdown automaton that expands rules top-down.
//
// A lazy grammar (trigger() non-empty) constrains only the end of an output: free text until the
// output contains the trigger, and from the trigger's first byte on the rules (then EOS); the
// matcher (matcher.h) handles the free part. Every front-end but the structural one builds
// ordinary grammars.
//
// Markup texts (markup_texts(), structural grammars only): the literal markup the grammar's
// output is made of (a tool call's begin and end, the prefix, separator, suffix, the trigger).
// A CompiledGrammar picks the vocabulary's special tokens whose piece lies within one of them
// ("markup tokens"), and the matcher lets the grammar take those whole, by their piece, wherever
// it accepts the piece's bytes (compiled_grammar.h). Other grammars have none: they never take a
// special token.
//
// A Grammar is immutable once built and safe to share between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/util/status.h"

namespace radixserve::grammar {

// A set of bytes (256 bits).
struct ByteSet {
  uint64_t bits[4] = {0, 0, 0, 0};

  static ByteSet Of(uint8_t b) {
    ByteSet s;
    s.Add(b);
    return s;
  }
  static ByteSet Range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.AddRange(lo, hi);
    return s;
  }
  static ByteSet All() {
    ByteSet s;
    for (auto& w : s.bits) w = ~uint64_t{0};
    return s;
  }
  void Add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void AddRange(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) Add(static_cast<uint8_t>(b));
  }
  void Remove(uint8_t b) { bits[b >> 6] &= ~(uint64_t{1} << (b & 63)); }
  bool Has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  bool Empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
  int Count() const {
    return __builtin_popcountll(bits[0]) + __builtin_popcountll(bits[1]) + __builtin_popcountll(bits[2]) +
           __builtin_popcountll(bits[3]);
  }
  ByteSet& operator|=(const ByteSet& o) {
    for (int i = 0; i < 4; ++i) bits[i] |= o.bits[i];
    return *this;
  }
  ByteSet Complement() const {
    ByteSet s;
    for (int i = 0; i < 4; ++i) s.bits[i] = ~bits[i];
    return s;
  }
  bool operator==(const ByteSet& o) const {
    return bits[0] == o.bits[0] && bits[1] == o.bits[1] && bits[2] == o.bits[2] && bits[3] == o.bits[3];
  }
};

// One element of an alternative: a byte from byte_sets[index], or rule `index`.
struct Symbol {
  enum Kind : uint8_t { kBytes, kRule };
  Kind kind;
  uint32_t index;
  static Symbol Bytes(uint32_t i) { return {kBytes, i}; }
  static Symbol Rule(uint32_t i) { return {kRule, i}; }
  bool operator==(const Symbol& o) const { return kind == o.kind && index == o.index; }
};

using Sequence = std::vector<Symbol>;

struct Rule {
  std::string name;                     // for errors and Dump(); unique in a grammar
  std::vector<Sequence> alternatives;   // an empty alternative matches the empty string
};

// Caps that bound what a client can make the server build (checked by GrammarBuilder and the
// front-ends). The defaults are the server's.
struct GrammarLimits {
  size_t max_symbols = 1'000'000;         // symbols over all alternatives of all rules
  size_t max_source_bytes = 256 << 10;    // schema / grammar / regex text (the largest real schema seen: 156 KB)
  size_t max_repeat = 10'000;             // a single {n,m} / minLength / maxItems bound expanded
  std::chrono::milliseconds max_compile_time{2000};
};

class Grammar {
 public:
  Grammar() = default;
  const std::vector<ByteSet>& byte_sets() const { return byte_sets_; }
  const std::vector<Rule>& rules() const { return rules_; }
  uint32_t root() const { return root_; }
  size_t symbol_count() const { return symbol_count_; }
  // Empty for an ordinary grammar; else the string whose first occurrence in the output starts
  // the rules (the rules' every match starts with it).
  const std::string& trigger() const { return trigger_; }
  bool lazy() const { return !trigger_.empty(); }
  // The literal markup strings (non-empty, distinct, in the order added); empty for every kind
  // but kStructural.
  const std::vector<std::string>& markup_texts() const { return markup_texts_; }
  // Text form (GBNF-like) for tests and debugging.
  std::string Dump() const;

 private:
  friend class GrammarBuilder;
  std::vector<ByteSet> byte_sets_;
  std::vector<Rule> rules_;
  uint32_t root_ = 0;
  size_t symbol_count_ = 0;
  std::string trigger_;
  std::vector<std::string> markup_texts_;
};

// Builds a Grammar. Front-ends declare rules (possibly before defining them, for recursion),
// add alternatives, and use the helpers for literals, Unicode ranges and repetition. Not
// thread-safe; one builder per compile.
class GrammarBuilder {
 public:
  explicit GrammarBuilder(GrammarLimits limits = {});

  // Declares a rule (empty until alternatives are added); names get a numeric suffix when taken.
  uint32_t NewRule(std::string_view name);
  void AddAlternative(uint32_t rule, Sequence seq);
  // The index of `set` in the byte-set table (deduplicated).
  uint32_t InternByteSet(const ByteSet& set);

  // Symbols that match exactly `bytes` (one byte-set symbol per byte).
  Sequence Literal(std::string_view bytes);
  Symbol Byte(uint8_t b) { return Symbol::Bytes(InternByteSet(ByteSet::Of(b))); }
  Symbol Bytes(const ByteSet& s) { return Symbol::Bytes(InternByteSet(s)); }
  // A rule matching one code point in any of the inclusive ranges (sorted or not, may overlap),
  // spelled in UTF-8 (surrogates D800-DFFF excluded, as UTF-8 has none).
  Symbol CodepointRanges(std::vector<std::pair<uint32_t, uint32_t>> ranges, std::string_view name = "cp");
  // A rule of one alternative per sequence.
  Symbol Choice(std::vector<Sequence> alternatives, std::string_view name = "alt");
  // A rule matching `seq` repeated min..max times (max < 0: unbounded). Bounded repeats past
  // limits().max_repeat fail (the builder's status).
  Symbol Repeat(const Sequence& seq, int64_t min, int64_t max, std::string_view name = "rep");
  Symbol Optional(const Sequence& seq, std::string_view name = "opt") { return Repeat(seq, 0, 1, name); }
  Symbol Star(const Sequence& seq, std::string_view name = "star") { return Repeat(seq, 0, -1, name); }
  Symbol Plus(const Sequence& seq, std::string_view name = "plus") { return Repeat(seq, 1, -1, name); }
  // A rule matching the empty string only.
  Symbol Empty();
  // A rule matching what `g` matches: g's byte sets and rules copied in under fresh names (its
  // trigger and markup texts are not carried). Counts against limits().max_symbols.
  Symbol Embed(const Grammar& g);
  // Makes the grammar Finish builds lazy (grammar.h's header); the caller checks that every
  // match of the root starts with `trigger`.
  void SetTrigger(std::string trigger) { g_.trigger_ = std::move(trigger); }
  // Records a literal markup string of the grammar (Grammar::markup_texts(); empty or repeated
  // strings are skipped). Only the structural front-end calls it.
  void AddMarkupText(std::string_view text);

  // The first error met (a cap passed, an expired deadline); Finish returns it.
  void Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  const Status& status() const { return status_; }
  const GrammarLimits& limits() const { return limits_; }
  // Fails with "compile ran past N ms" once the deadline is passed; front-ends call it in loops.
  bool CheckDeadline();

  // Checks every rule is defined (has an alternative) and reachable rules are not left
  // recursive, drops unreachable rules, and returns the grammar rooted at `root`.
  Result<Grammar> Finish(uint32_t root);

 private:
  GrammarLimits limits_;
  std::chrono::steady_clock::time_point deadline_;
  Status status_;
  Grammar g_;
  // Per repeated symbol (kind << 32 | index): its chain of "up to k more" rules, chain[k - 1]
  // taking up to k; every bounded repetition of the symbol shares the chain's tail (a schema's
  // many strings of maxLength 255 or 4096 build one chain, not one each).
  std::unordered_map<uint64_t, std::vector<Symbol>> up_to_chains_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> set_index_;  // hash of a set -> its indices
};

}  // namespace radixserve::grammar
