// Exact decimals and number-range grammars (see json_schema_numbers.h).
#include "core/grammar/json_schema_numbers.h"

#include <algorithm>
#include <charconv>

namespace radixserve::grammar::internal {

namespace {

std::string StripLeadingZeros(std::string s) {
  size_t i = 0;
  while (i < s.size() && s[i] == '0') ++i;
  return s.substr(i);
}
std::string StripTrailingZeros(std::string s) {
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

// Magnitude comparison of non-negative integers as digit strings without leading zeros.
int CompareDigits(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

// |a| + 1 and |a| - 1 on digit strings without leading zeros ("" is 0; a - 1 needs a > 0).
std::string IncDigits(std::string a) {
  int i = static_cast<int>(a.size()) - 1;
  while (i >= 0 && a[i] == '9') a[i--] = '0';
  if (i < 0) {
    a.insert(a.begin(), '1');
    return a;
  }
  ++a[i];
  return a;
}
std::string DecDigits(std::string a) {
  int i = static_cast<int>(a.size()) - 1;
  while (i >= 0 && a[i] == '0') a[i--] = '9';
  if (i >= 0) --a[i];
  return StripLeadingZeros(a);
}

Decimal Normalized(bool neg, std::string ip, std::string fp) {
  Decimal d;
  d.ip = StripLeadingZeros(std::move(ip));
  d.fp = StripTrailingZeros(std::move(fp));
  d.neg = neg && !d.IsZero();
  return d;
}

}  // namespace

std::optional<Decimal> Decimal::Parse(std::string_view t) {
  size_t i = 0;
  bool neg = false;
  if (i < t.size() && t[i] == '-') neg = true, ++i;
  std::string ip, fp;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ip.push_back(t[i++]);
  if (ip.empty()) return std::nullopt;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') fp.push_back(t[i++]);
    if (fp.empty()) return std::nullopt;
  }
  int64_t exp = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) eneg = t[i] == '-', ++i;
    if (i >= t.size()) return std::nullopt;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      exp = exp * 10 + (t[i++] - '0');
      if (exp > 4000) return std::nullopt;  // far past any double; refuse rather than allocate
    }
    if (eneg) exp = -exp;
  }
  if (i != t.size()) return std::nullopt;
  // Shift the point by `exp`.
  std::string digits = ip + fp;
  int64_t point = static_cast<int64_t>(ip.size()) + exp;
  if (point < 0) {
    digits = std::string(static_cast<size_t>(-point), '0') + digits;
    point = 0;
  } else if (point > static_cast<int64_t>(digits.size())) {
    digits += std::string(static_cast<size_t>(point) - digits.size(), '0');
  }
  return Normalized(neg, digits.substr(0, static_cast<size_t>(point)), digits.substr(static_cast<size_t>(point)));
}

std::optional<Decimal> Decimal::FromJson(const nlohmann::ordered_json& v) {
  if (v.is_number_unsigned()) return Normalized(false, std::to_string(v.get<uint64_t>()), "");
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    std::string s = std::to_string(x);
    if (x < 0) return Normalized(true, s.substr(1), "");
    return Normalized(false, s, "");
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) return std::nullopt;
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
    if (ec != std::errc()) return std::nullopt;
    return Parse(std::string_view(buf, static_cast<size_t>(end - buf)));
  }
  return std::nullopt;
}

std::string Decimal::ToString() const {
  std::string s = neg ? "-" : "";
  s += ip.empty() ? "0" : ip;
  if (!fp.empty()) s += "." + fp;
  return s;
}

int Compare(const Decimal& a, const Decimal& b) {
  if (a.neg != b.neg) return a.neg ? -1 : 1;
  int c = CompareDigits(a.ip, b.ip);
  if (c == 0) {
    const size_t n = std::max(a.fp.size(), b.fp.size());
    std::string fa = a.fp, fb = b.fp;
    fa.resize(n, '0');
    fb.resize(n, '0');
    c = fa.compare(fb) < 0 ? -1 : (fa == fb ? 0 : 1);
  }
  return a.neg ? -c : c;
}

Decimal Decimal::PlusOne() const {
  if (neg) return Normalized(true, DecDigits(ip), "");
  return Normalized(false, IncDigits(ip), "");
}
Decimal Decimal::MinusOne() const {
  if (neg || IsZero()) return Normalized(true, IncDigits(ip), "");
  return Normalized(false, DecDigits(ip), "");
}
Decimal Decimal::Ceil() const {
  if (fp.empty()) return *this;
  return neg ? Normalized(true, ip, "") : Normalized(false, IncDigits(ip), "");
}
Decimal Decimal::Floor() const {
  if (fp.empty()) return *this;
  return neg ? Normalized(true, IncDigits(ip), "") : Normalized(false, ip, "");
}

// ---------------------------------------------------------------------------------------------

Symbol NumberEmitter::Digits(size_t n) {
  auto it = digits_.find(n);
  if (it != digits_.end()) return it->second;
  const Symbol d = b_->Bytes(ByteSet::Range('0', '9'));
  const Symbol s = n == 1 ? d : b_->Choice({Sequence(n, d)}, "digits");
  digits_.emplace(n, s);
  return s;
}

Symbol NumberEmitter::AnyDigits() {
  if (!any_digits_) any_digits_ = b_->Star({b_->Bytes(ByteSet::Range('0', '9'))}, "digits");
  return *any_digits_;
}

Symbol NumberEmitter::PointZero() {
  if (!point_zero_) {
    const Symbol zeros = b_->Plus({b_->Byte('0')}, "zeros");
    point_zero_ = b_->Optional({b_->Byte('.'), zeros}, "point-zero");
  }
  return *point_zero_;
}

Symbol NumberEmitter::FixedRange(const std::string& x, const std::string& y) {
  auto key = std::make_pair(x, y);
  auto it = fixed_.find(key);
  if (it != fixed_.end()) return it->second;
  GrammarBuilder& b = *b_;
  const size_t n = x.size();
  Symbol out;
  if (n == 1) {
    out = b.Bytes(ByteSet::Range(static_cast<uint8_t>(x[0]), static_cast<uint8_t>(y[0])));
  } else if (x == y) {
    out = b.Choice({b.Literal(x)}, "lit");
  } else if (x[0] == y[0]) {
    out = b.Choice({{b.Byte(static_cast<uint8_t>(x[0])), FixedRange(x.substr(1), y.substr(1))}}, "range");
  } else {
    std::vector<Sequence> alts;
    const std::string xr = x.substr(1), yr = y.substr(1);
    const bool low_zero = xr.find_first_not_of('0') == std::string::npos;
    const bool high_nine = yr.find_first_not_of('9') == std::string::npos;
    char mid_lo = x[0], mid_hi = y[0];
    if (!low_zero) {
      alts.push_back({b.Byte(static_cast<uint8_t>(x[0])), FixedRange(xr, std::string(n - 1, '9'))});
      ++mid_lo;
    }
    if (!high_nine) --mid_hi;
    if (mid_lo <= mid_hi)
      alts.push_back({b.Bytes(ByteSet::Range(static_cast<uint8_t>(mid_lo), static_cast<uint8_t>(mid_hi))), Digits(n - 1)});
    if (!high_nine) alts.push_back({b.Byte(static_cast<uint8_t>(y[0])), FixedRange(std::string(n - 1, '0'), yr)});
    out = b.Choice(std::move(alts), "range");
  }
  fixed_.emplace(std::move(key), out);
  return out;
}

std::optional<Symbol> NumberEmitter::IntRange(const std::string& lo_in, const std::optional<std::string>& hi_in) {
  const std::string a = lo_in.empty() ? "0" : lo_in;
  std::optional<std::string> bnd;
  if (hi_in) bnd = hi_in->empty() ? "0" : *hi_in;
  if (bnd && CompareDigits(a == "0" ? "" : a, *bnd == "0" ? "" : *bnd) > 0) return std::nullopt;
  GrammarBuilder& b = *b_;
  std::vector<Sequence> alts;
  const size_t last = bnd ? bnd->size() : a.size();
  for (size_t len = a.size(); len <= last; ++len) {
    std::string low = a;
    if (len != a.size()) {
      low.assign(len, '0');
      low[0] = '1';
    }
    const std::string high = bnd && len == bnd->size() ? *bnd : std::string(len, '9');
    alts.push_back({FixedRange(low, high)});
  }
  if (!bnd) alts.push_back({b.Bytes(ByteSet::Range('1', '9')), Digits(a.size()), AnyDigits()});
  if (alts.size() == 1 && alts[0].size() == 1) return alts[0][0];
  return b.Choice(std::move(alts), "int");
}

namespace {
// A fraction bound: -1 absent, else present with its digits ("" is zero).
bool ZeroAllowed(int state, const std::string& s, bool excl) { return state < 0 || (s.empty() && !excl); }
bool EmptyRestOk(int lo_state, const std::string& lo, bool lo_excl, int hi_state, const std::string& hi, bool hi_excl) {
  const bool lo_ok = lo_state < 0 || (lo.empty() && !lo_excl);
  const bool hi_ok = hi_state < 0 || !hi.empty() || !hi_excl;
  return lo_ok && hi_ok;
}
}  // namespace

std::optional<Symbol> NumberEmitter::FracDigits(int lo_state, const std::string& lo, bool lo_excl, int hi_state,
                                                const std::string& hi, bool hi_excl, int budget) {
  if (lo_state >= 0 && lo.empty() && !lo_excl) lo_state = -1;  // >= 0 holds for every fraction
  if (lo_state < 0) lo_excl = false;
  if (hi_state < 0) hi_excl = false;
  const std::string lo_key = lo_state < 0 ? "" : lo, hi_key = hi_state < 0 ? "" : hi;
  auto key = std::make_tuple(lo_state, lo_key, lo_excl, hi_state, hi_key, hi_excl, budget);
  auto it = frac_.find(key);
  if (it != frac_.end()) return it->second;
  GrammarBuilder& b = *b_;
  std::optional<Symbol> out;
  const bool zeros_only = budget == 0 || (hi_state >= 0 && hi.empty());
  if (zeros_only) {
    // Only zeros may follow: the value is what was read so far.
    if (ZeroAllowed(lo_state, lo, lo_excl) && (hi_state < 0 || !hi.empty() || !hi_excl))
      out = b.Plus({b.Byte('0')}, "zeros");
    frac_.emplace(key, out);
    return out;
  }
  if (lo_state < 0 && hi_state < 0 && budget < 0) {
    out = b.Plus({b.Bytes(ByteSet::Range('0', '9'))}, "frac");
    frac_.emplace(key, out);
    return out;
  }
  // Declare the rule first: a zero digit after an exclusive zero bound loops to this state.
  const uint32_t rule = b.NewRule("frac");
  frac_.emplace(key, Symbol::Rule(rule));
  struct Next {
    int lo_state;
    std::string lo;
    int hi_state;
    std::string hi;
  };
  std::vector<std::pair<ByteSet, Next>> groups;
  for (int d = 0; d <= 9; ++d) {
    const char c = static_cast<char>('0' + d);
    Next n{-1, "", -1, ""};
    if (lo_state >= 0) {
      const char l0 = lo.empty() ? '0' : lo[0];
      if (c < l0) continue;
      if (c == l0) n.lo_state = 1, n.lo = lo.empty() ? "" : lo.substr(1);
    }
    if (hi_state >= 0) {
      const char h0 = hi.empty() ? '0' : hi[0];
      if (c > h0) continue;
      if (c == h0) n.hi_state = 1, n.hi = hi.empty() ? "" : hi.substr(1);
    }
    bool merged = false;
    for (auto& [set, g] : groups)
      if (g.lo_state == n.lo_state && g.lo == n.lo && g.hi_state == n.hi_state && g.hi == n.hi) {
        set.Add(static_cast<uint8_t>(c));
        merged = true;
      }
    if (!merged) groups.push_back({ByteSet::Of(static_cast<uint8_t>(c)), n});
  }
  const int next_budget = budget < 0 ? -1 : budget - 1;
  bool any = false;
  for (const auto& [set, n] : groups) {
    const bool lo_x = n.lo_state >= 0 && lo_excl, hi_x = n.hi_state >= 0 && hi_excl;
    if (EmptyRestOk(n.lo_state, n.lo, lo_x, n.hi_state, n.hi, hi_x)) {
      b.AddAlternative(rule, {b.Bytes(set)});
      any = true;
    }
    auto rest = FracDigits(n.lo_state, n.lo, lo_x, n.hi_state, n.hi, hi_x, next_budget);
    if (rest) {
      b.AddAlternative(rule, {b.Bytes(set), *rest});
      any = true;
    }
  }
  if (!any) {
    // Unreachable in practice (a bound that no digit string meets is caught by the callers);
    // leave the rule unused.
    frac_[key] = std::nullopt;
    return std::nullopt;
  }
  return Symbol::Rule(rule);
}

std::optional<Sequence> NumberEmitter::Fraction(int lo_state, const std::string& lo, bool lo_excl, int hi_state,
                                                const std::string& hi, bool hi_excl, int budget) {
  if (nonzero_fraction_) {
    // Above zero: some digit of the fraction is not 0 (and a fraction must be written).
    if (lo_state < 0) {
      lo_state = 1;
      lo_excl = true;
    } else if (lo.empty()) {
      lo_excl = true;
    }
  }
  const bool absent_ok = EmptyRestOk(lo_state, lo, lo_state >= 0 && lo_excl, hi_state, hi, hi_state >= 0 && hi_excl);
  auto digits = FracDigits(lo_state, lo, lo_excl, hi_state, hi, hi_excl, budget);
  GrammarBuilder& b = *b_;
  if (digits && absent_ok) return Sequence{b.Optional({b.Byte('.'), *digits}, "frac-opt")};
  if (digits) return Sequence{b.Byte('.'), *digits};
  if (absent_ok) return Sequence{};
  return std::nullopt;
}

std::optional<Symbol> NumberEmitter::Magnitude(const Decimal& lo, bool lo_excl, const std::optional<Decimal>& hi,
                                               bool hi_excl, bool integer, int budget) {
  if (hi) {
    const int c = Compare(lo, *hi);
    if (c > 0 || (c == 0 && (lo_excl || hi_excl))) return std::nullopt;
  }
  GrammarBuilder& b = *b_;
  if (integer) {
    Decimal l = lo_excl ? lo.Floor().PlusOne() : lo.Ceil();
    std::optional<std::string> h;
    if (hi) {
      Decimal hh = hi_excl ? hi->Ceil().MinusOne() : hi->Floor();
      if (hh.neg || Compare(hh, l) < 0) return std::nullopt;
      h = hh.ip;
    }
    auto r = IntRange(l.ip, h);
    if (!r) return std::nullopt;
    if (!allow_point_zero_) return r;
    return b.Choice({{*r, PointZero()}}, "int");
  }
  auto lit = [&](const std::string& ip) { return b.Literal(ip.empty() ? "0" : ip); };
  std::vector<Sequence> alts;
  auto add = [&](Sequence head, const std::optional<Sequence>& frac) {
    if (!frac) return;
    head.insert(head.end(), frac->begin(), frac->end());
    alts.push_back(std::move(head));
  };
  if (hi && lo.ip == hi->ip) {
    add(lit(lo.ip), Fraction(1, lo.fp, lo_excl, 1, hi->fp, hi_excl, budget));
  } else {
    add(lit(lo.ip), Fraction(1, lo.fp, lo_excl, -1, "", false, budget));
    std::optional<std::string> upper;
    bool middle = true;
    if (hi) {
      if (CompareDigits(hi->ip, IncDigits(lo.ip)) < 0) middle = false;
      else upper = DecDigits(hi->ip);
    }
    if (middle) {
      auto r = IntRange(IncDigits(lo.ip), upper);
      if (r) add({*r}, Fraction(-1, "", false, -1, "", false, budget));
    }
    if (hi) add(lit(hi->ip), Fraction(-1, "", false, 1, hi->fp, hi_excl, budget));
  }
  if (alts.empty()) return std::nullopt;
  return b.Choice(std::move(alts), "mag");
}

std::optional<Symbol> NumberEmitter::Emit(const NumberSpec& spec_in) {
  GrammarBuilder& b = *b_;
  NumberSpec spec = spec_in;
  if (spec.non_integer && spec.integer) return std::nullopt;
  struct Restore {
    bool* flag;
    bool old;
    ~Restore() { *flag = old; }
  } restore_nonzero{&nonzero_fraction_, nonzero_fraction_}, restore_point{&allow_point_zero_, allow_point_zero_};
  nonzero_fraction_ = spec.non_integer;
  allow_point_zero_ = spec.point_zero && options_.integer_point_zero;
  if (spec.lo && spec.hi) {
    const int c = Compare(*spec.lo, *spec.hi);
    if (c > 0 || (c == 0 && (spec.lo_excl || spec.hi_excl))) return std::nullopt;
  }
  if (spec.integer && !spec.excluded.empty()) {
    // Split the integer range around the excluded values.
    std::optional<Decimal> lo, hi;
    if (spec.lo) lo = spec.lo_excl ? spec.lo->Floor().PlusOne() : spec.lo->Ceil();
    if (spec.hi) hi = spec.hi_excl ? spec.hi->Ceil().MinusOne() : spec.hi->Floor();
    std::vector<Decimal> ex;
    for (const auto& e : spec.excluded)
      if (e.IsInteger() && (!lo || Compare(e, *lo) >= 0) && (!hi || Compare(e, *hi) <= 0)) ex.push_back(e);
    std::sort(ex.begin(), ex.end(), [](const Decimal& x, const Decimal& y) { return Compare(x, y) < 0; });
    std::vector<Sequence> alts;
    std::optional<Decimal> cur = lo;
    auto piece = [&](std::optional<Decimal> a, std::optional<Decimal> z) {
      if (a && z && Compare(*a, *z) > 0) return;
      NumberSpec s;
      s.integer = true;
      s.point_zero = spec.point_zero;
      s.lo = a;
      s.hi = z;
      if (auto sym = Emit(s)) alts.push_back({*sym});
    };
    for (const auto& e : ex) {
      piece(cur, e.MinusOne());
      cur = e.PlusOne();
    }
    piece(cur, hi);
    if (alts.empty()) return std::nullopt;
    return b.Choice(std::move(alts), "num");
  }
  const Symbol minus = b.Byte('-');
  if (!spec.integer && !spec.non_integer && !spec.lo && !spec.hi && spec.max_frac_digits < 0) {
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const Symbol digit = b.Bytes(ByteSet::Range('0', '9'));
    const Symbol intpart = b.Choice({b.Literal("0"), {b.Bytes(ByteSet::Range('1', '9')), AnyDigits()}}, "int");
    const Symbol frac = b.Optional({b.Byte('.'), b.Plus({digit}, "frac")}, "frac-opt");
    ByteSet e;
    e.Add('e');
    e.Add('E');
    ByteSet sign;
    sign.Add('+');
    sign.Add('-');
    const Symbol exp = b.Optional({b.Bytes(e), b.Optional({b.Bytes(sign)}, "sign"), b.Plus({digit}, "exp-digits")}, "exp");
    return b.Choice({{b.Optional({minus}, "minus"), intpart, frac, exp}}, "number");
  }
  std::vector<Sequence> alts;
  const Decimal zero;
  const bool zero_in = (!spec.lo || Compare(*spec.lo, zero) < 0 || (Compare(*spec.lo, zero) == 0 && !spec.lo_excl)) &&
                       (!spec.hi || Compare(*spec.hi, zero) > 0 || (Compare(*spec.hi, zero) == 0 && !spec.hi_excl));
  // Values >= 0.
  if (!spec.hi || !spec.hi->neg) {
    Decimal lo = zero;
    bool lo_excl = false;
    if (spec.lo && !spec.lo->neg) lo = *spec.lo, lo_excl = spec.lo_excl;
    if (auto m = Magnitude(lo, lo_excl, spec.hi, spec.hi_excl, spec.integer, spec.max_frac_digits)) alts.push_back({*m});
  }
  // Values < 0: '-' and a magnitude in (|hi| or 0, |lo|].
  if (!spec.lo || spec.lo->neg) {
    Decimal lo = zero;
    bool lo_excl = true;
    if (spec.hi && spec.hi->neg) lo = spec.hi->Abs(), lo_excl = spec.hi_excl;
    std::optional<Decimal> hi;
    if (spec.lo) hi = spec.lo->Abs();
    if (auto m = Magnitude(lo, lo_excl, hi, spec.lo_excl, spec.integer, spec.max_frac_digits))
      alts.push_back({minus, *m});
  }
  // -0 is 0 (integers only when they may carry a zero fraction: a caller that wants plain
  // integers wants no -0 either).
  if (zero_in && !spec.non_integer && (!spec.integer || allow_point_zero_)) {
    Sequence s{minus, b.Byte('0')};
    if (!spec.integer || allow_point_zero_) s.push_back(PointZero());
    alts.push_back(std::move(s));
  }
  if (alts.empty()) return std::nullopt;
  return b.Choice(std::move(alts), "num");
}

}  // namespace radixserve::grammar::internal
