// Numbers for the JSON Schema compiler: exact decimals and the grammar of the JSON number texts
// whose value lies in a range.
//
// JSON Schema bounds (`minimum`, `exclusiveMaximum`, ...) are compared with the value, not the
// text, so the grammar has to enumerate texts by value: an integer range [lo, hi] becomes digit
// patterns per length (the classic split into prefix, middle and suffix runs), and a decimal
// bound compares the integer part first and then the fraction digit by digit. Everything is
// computed on decimal digit strings, so bounds of any size and precision are exact.
//
// Texts produced (the JSON number syntax, so the output always parses):
//   integers: -?(0|[1-9][0-9]*), optionally followed by `.0+` (JSON Schema, and Python's
//             validator, count 1.0 as an integer; NumberOptions::integer_point_zero).
//   numbers:  -?(0|[1-9][0-9]*)(\.[0-9]+)? and, only when no bound applies, an exponent
//             [eE][+-]?[0-9]+ (a bounded number is written without an exponent, which keeps the
//             range grammar finite and exact).
// `-0` counts as 0.
//
// Thread-safety: Decimal is a value; a NumberEmitter belongs to one builder (one thread).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grammar/grammar.h"

namespace radixserve::grammar::internal {

// An exact decimal: (neg ? -1 : 1) * ip.fp. Zero is never negative.
struct Decimal {
  bool neg = false;
  std::string ip;  // integer digits without leading zeros ("" is 0)
  std::string fp;  // fraction digits without trailing zeros

  bool IsZero() const { return ip.empty() && fp.empty(); }
  bool IsInteger() const { return fp.empty(); }
  // JSON number syntax (with an exponent of at most a few thousand); nullopt otherwise.
  static std::optional<Decimal> Parse(std::string_view text);
  // A JSON number value (a double as its shortest round-trip decimal); nullopt if not a number.
  static std::optional<Decimal> FromJson(const nlohmann::ordered_json& v);
  static Decimal Zero() { return Decimal{}; }
  std::string ToString() const;
  // The next integer up / down (integers only).
  Decimal PlusOne() const;
  Decimal MinusOne() const;
  Decimal Ceil() const;
  Decimal Floor() const;
  Decimal Abs() const {
    Decimal d = *this;
    d.neg = false;
    return d;
  }
};

// <0, 0, >0 as a is below, equal to, above b.
int Compare(const Decimal& a, const Decimal& b);

// What a number must satisfy.
struct NumberSpec {
  bool integer = false;  // integral values only
  std::optional<Decimal> lo, hi;
  bool lo_excl = false, hi_excl = false;
  // Fraction digits allowed past the point before only zeros may follow (multipleOf 10^-d gives
  // d); -1: any.
  int max_frac_digits = -1;
  // Integral values that are excluded (`not: {enum: [...]}` on integers).
  std::vector<Decimal> excluded;
  // Values that are not integers only (`not: {type: integer}` on numbers): a non-zero fraction
  // digit is required.
  bool non_integer = false;
  // Whether integral values may also be written 1.0 and -0 (with NumberOptions::
  // integer_point_zero): not for draft 4's `type: integer`, which refuses 1.0.
  bool point_zero = true;
};

struct NumberOptions {
  bool integer_point_zero = true;
};

class NumberEmitter {
 public:
  NumberEmitter(GrammarBuilder* b, NumberOptions options) : b_(b), options_(options) {}
  // The JSON number texts whose value satisfies `spec`; nullopt when no value does.
  std::optional<Symbol> Emit(const NumberSpec& spec);

 private:
  // Unsigned texts (0|[1-9][0-9]*)(\.[0-9]+)? with value in the interval (hi nullopt: no upper
  // bound). Integers only (no fraction) when `integer`.
  std::optional<Symbol> Magnitude(const Decimal& lo, bool lo_excl, const std::optional<Decimal>& hi, bool hi_excl,
                                  bool integer, int budget);
  // Digit strings of integers in [lo, hi] (hi nullopt: unbounded), no leading zeros.
  std::optional<Symbol> IntRange(const std::string& lo, const std::optional<std::string>& hi);
  // Same-length digit strings in [x, y].
  Symbol FixedRange(const std::string& x, const std::string& y);
  Symbol Digits(size_t n);  // [0-9]{n}
  Symbol AnyDigits();       // [0-9]*
  // Non-empty fraction digit strings S with lo (<|<=) 0.S (<|<=) hi. A bound is absent (-1),
  // zero ("" with the flag), or a digit string; `budget` as in NumberSpec::max_frac_digits.
  std::optional<Symbol> FracDigits(int lo_state, const std::string& lo, bool lo_excl, int hi_state,
                                   const std::string& hi, bool hi_excl, int budget);
  // `.digits` allowed after an integer part, or nothing; nullopt when neither is.
  std::optional<Sequence> Fraction(int lo_state, const std::string& lo, bool lo_excl, int hi_state,
                                   const std::string& hi, bool hi_excl, int budget);
  Symbol PointZero();  // (\.0+)?

  GrammarBuilder* b_;
  NumberOptions options_;
  std::map<std::pair<std::string, std::string>, Symbol> fixed_;
  std::map<size_t, Symbol> digits_;
  std::optional<Symbol> any_digits_, point_zero_;
  std::map<std::tuple<int, std::string, bool, int, std::string, bool, int>, std::optional<Symbol>> frac_;
  bool nonzero_fraction_ = false;  // set while emitting a non_integer spec
  bool allow_point_zero_ = true;   // the spec's point_zero, while emitting it
};

}  // namespace radixserve::grammar::internal
