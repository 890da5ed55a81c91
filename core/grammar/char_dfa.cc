// CharDfa (see char_dfa.h): regex parsing, Thompson NFA, subset construction, products,
// trimming and minimization, and the JSON-string emitter.
#include "core/grammar/char_dfa.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>

namespace radixserve::grammar::internal {

namespace {

// The code points a DFA reads: all of Unicode but the surrogates.
const CpRanges& Universe() {
  static const CpRanges u = {{0, 0xD7FF}, {0xE000, kMaxCodepoint}};
  return u;
}

std::vector<CharDfa::Edge> UniverseEdges(uint32_t to) {
  std::vector<CharDfa::Edge> e;
  for (const auto& [lo, hi] : Universe()) e.push_back({lo, hi, to});
  return e;
}

// Sorts edges, drops surrogates, merges adjacent ranges that go to the same state. Edges must
// not overlap.
void CanonicalEdges(std::vector<CharDfa::Edge>* edges) {
  std::vector<CharDfa::Edge> in;
  for (const auto& e : *edges) {
    if (e.lo > e.hi) continue;
    if (e.hi < 0xD800 || e.lo > 0xDFFF) {
      in.push_back(e);
      continue;
    }
    if (e.lo < 0xD800) in.push_back({e.lo, 0xD7FF, e.to});
    if (e.hi > 0xDFFF) in.push_back({0xE000, e.hi, e.to});
  }
  std::sort(in.begin(), in.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
  std::vector<CharDfa::Edge> out;
  for (const auto& e : in) {
    if (!out.empty() && out.back().to == e.to &&
        (out.back().hi + 1 == e.lo || (out.back().hi == 0xD7FF && e.lo == 0xE000))) {
      out.back().hi = e.hi;
    } else {
      out.push_back(e);
    }
  }
  *edges = std::move(out);
}

// ---------------------------------------------------------------------------------------------
// Regex syntax tree and parser (ECMAScript subset of regex.h, same character sets).

struct RNode {
  enum Kind { kSet, kConcat, kAlt, kRepeat, kBol, kEol, kLook } kind = kConcat;  // empty concat = ε
  bool negative = false;  // kLook: (?! rather than (?=
  CpRanges set;
  std::vector<std::unique_ptr<RNode>> kids;
  int64_t min = 0, max = 0;  // kRepeat; max < 0 unbounded
};
using RPtr = std::unique_ptr<RNode>;

RPtr MakeSet(CpRanges s) {
  NormalizeRanges(&s);
  auto n = std::make_unique<RNode>();
  n->kind = RNode::kSet;
  n->set = std::move(s);
  return n;
}

CpRanges DigitSet() { return {{'0', '9'}}; }
CpRanges WordSet() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
CpRanges SpaceSet() {
  return {{0x09, 0x0D}, {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
CpRanges DotSet() { return {{0, 0x09}, {0x0B, 0x0C}, {0x0E, 0x2027}, {0x202A, kMaxCodepoint}}; }

int HexValue(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

class RegexParser {
 public:
  RegexParser(std::u32string_view p, size_t max_repeat) : p_(p), max_repeat_(max_repeat) {}

  Result<RPtr> Parse() {
    RPtr n = ParseAlt(0);
    if (!status_.ok()) return status_;
    if (pos_ < p_.size()) {
      Error(Status::InvalidArgument, "unbalanced ')'");
      return status_;
    }
    return n;
  }

 private:
  void Error(Status (*make)(std::string), const std::string& what) {
    if (status_.ok()) status_ = make(what + " at offset " + std::to_string(pos_));
  }
  bool Failed() const { return !status_.ok(); }
  bool AtEnd() const { return pos_ >= p_.size(); }
  uint32_t Peek(size_t k = 0) const { return pos_ + k < p_.size() ? p_[pos_ + k] : 0; }

  RPtr ParseAlt(int depth) {
    if (depth > 100) {
      Error(Status::Unsupported, "groups nested more than 100 deep");
      return nullptr;
    }
    std::vector<RPtr> alts;
    alts.push_back(ParseConcat(depth));
    while (!Failed() && !AtEnd() && Peek() == '|') {
      ++pos_;
      alts.push_back(ParseConcat(depth));
    }
    if (Failed()) return nullptr;
    if (alts.size() == 1) return std::move(alts[0]);
    auto n = std::make_unique<RNode>();
    n->kind = RNode::kAlt;
    n->kids = std::move(alts);
    return n;
  }

  RPtr ParseConcat(int depth) {
    auto n = std::make_unique<RNode>();
    n->kind = RNode::kConcat;
    while (!Failed() && !AtEnd() && Peek() != '|' && Peek() != ')') {
      RPtr atom = ParseAtom(depth);
      if (Failed()) return nullptr;
      atom = ParseQuantifier(std::move(atom));
      if (Failed()) return nullptr;
      n->kids.push_back(std::move(atom));
    }
    return n;
  }

  // Reads {n}, {n,} or {n,m} at pos_ without consuming on failure.
  bool ReadBraces(int64_t* min, int64_t* max) {
    size_t i = pos_ + 1;
    auto number = [&](int64_t* out) {
      size_t start = i;
      int64_t v = 0;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') {
        v = std::min<int64_t>(v * 10 + (p_[i] - '0'), int64_t{1} << 40);
        ++i;
      }
      *out = v;
      return i > start;
    };
    if (!number(min)) return false;
    *max = *min;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      if (!number(max)) *max = -1;
    }
    if (i >= p_.size() || p_[i] != '}') return false;
    pos_ = i + 1;
    return true;
  }

  RPtr ParseQuantifier(RPtr atom) {
    if (AtEnd()) return atom;
    int64_t min, max;
    const uint32_t c = Peek();
    if (c == '*') {
      min = 0, max = -1, ++pos_;
    } else if (c == '+') {
      min = 1, max = -1, ++pos_;
    } else if (c == '?') {
      min = 0, max = 1, ++pos_;
    } else if (c == '{') {
      if (!ReadBraces(&min, &max)) return atom;  // Annex B: a literal '{'
    } else {
      return atom;
    }
    if (atom->kind == RNode::kBol || atom->kind == RNode::kEol || atom->kind == RNode::kLook) {
      Error(Status::InvalidArgument, "nothing to repeat");
      return nullptr;
    }
    if (max >= 0 && max < min) {
      Error(Status::InvalidArgument, "repetition {" + std::to_string(min) + "," + std::to_string(max) + "} out of order");
      return nullptr;
    }
    if (static_cast<uint64_t>(min) > max_repeat_ || (max >= 0 && static_cast<uint64_t>(max) > max_repeat_)) {
      Error(Status::ResourceExhausted, "repetition bound over the cap of " + std::to_string(max_repeat_));
      return nullptr;
    }
    if (!AtEnd() && Peek() == '?') ++pos_;  // lazy: the same language
    if (!AtEnd() && (Peek() == '*' || Peek() == '+' || Peek() == '?')) {
      Error(Status::InvalidArgument, "nothing to repeat");
      return nullptr;
    }
    auto n = std::make_unique<RNode>();
    n->kind = RNode::kRepeat;
    n->min = min;
    n->max = max;
    n->kids.push_back(std::move(atom));
    return n;
  }

  // \uHHHH at pos_ (after the backslash and 'u'); joins a surrogate pair.
  bool ReadUnicodeEscape(uint32_t* cp) {
    if (Peek() == '{') {
      size_t i = pos_ + 1;
      uint32_t v = 0;
      while (i < p_.size() && HexValue(p_[i]) >= 0) {
        v = v * 16 + static_cast<uint32_t>(HexValue(p_[i]));
        if (v > kMaxCodepoint) return false;
        ++i;
      }
      if (i == pos_ + 1 || i >= p_.size() || p_[i] != '}') return false;
      pos_ = i + 1;
      *cp = v;
      return true;
    }
    auto hex4 = [&](size_t at, uint32_t* out) {
      if (at + 4 > p_.size()) return false;
      uint32_t v = 0;
      for (size_t k = 0; k < 4; ++k) {
        const int h = HexValue(p_[at + k]);
        if (h < 0) return false;
        v = v * 16 + static_cast<uint32_t>(h);
      }
      *out = v;
      return true;
    };
    uint32_t v;
    if (!hex4(pos_, &v)) return false;
    pos_ += 4;
    uint32_t lo;
    if (v >= 0xD800 && v <= 0xDBFF && pos_ + 1 < p_.size() && p_[pos_] == '\\' && p_[pos_ + 1] == 'u' &&
        hex4(pos_ + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
      pos_ += 6;
      v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
    }
    *cp = v;
    return true;
  }

  // An escape after '\' (pos_ at the escaped character). Sets *set for class escapes, else *cp.
  // Returns false on error (status set).
  bool ParseEscape(bool in_class, CpRanges* set, uint32_t* cp, bool* is_set) {
    *is_set = false;
    if (AtEnd()) {
      Error(Status::InvalidArgument, "pattern ends with '\\'");
      return false;
    }
    const uint32_t c = p_[pos_++];
    auto class_set = [&](CpRanges s, bool negate) {
      NormalizeRanges(&s);
      *set = negate ? ComplementRanges(s) : std::move(s);
      *is_set = true;
      return true;
    };
    switch (c) {
      case 'd': return class_set(DigitSet(), false);
      case 'D': return class_set(DigitSet(), true);
      case 'w': return class_set(WordSet(), false);
      case 'W': return class_set(WordSet(), true);
      case 's': return class_set(SpaceSet(), false);
      case 'S': return class_set(SpaceSet(), true);
      case 'n': *cp = '\n'; return true;
      case 't': *cp = '\t'; return true;
      case 'r': *cp = '\r'; return true;
      case 'f': *cp = '\f'; return true;
      case 'v': *cp = '\v'; return true;
      case 'b':
        if (in_class) {
          *cp = 0x08;
          return true;
        }
        --pos_;
        Error(Status::Unsupported, "word boundary \\b");
        return false;
      case 'B':
        --pos_;
        Error(Status::Unsupported, "word boundary \\B");
        return false;
      case '0':
        if (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
          Error(Status::Unsupported, "octal escape");
          return false;
        }
        *cp = 0;
        return true;
      case 'c':
        if (!AtEnd() && ((Peek() >= 'a' && Peek() <= 'z') || (Peek() >= 'A' && Peek() <= 'Z'))) {
          *cp = p_[pos_++] % 32;
          return true;
        }
        Error(Status::InvalidArgument, "bad \\c escape");
        return false;
      case 'x': {
        const int h1 = HexValue(Peek()), h2 = HexValue(Peek(1));
        if (h1 < 0 || h2 < 0) {
          Error(Status::InvalidArgument, "bad \\x escape");
          return false;
        }
        pos_ += 2;
        *cp = static_cast<uint32_t>(h1 * 16 + h2);
        return true;
      }
      case 'u':
        if (!ReadUnicodeEscape(cp)) {
          Error(Status::InvalidArgument, "bad \\u escape");
          return false;
        }
        return true;
      case 'p':
      case 'P':
        --pos_;
        Error(Status::Unsupported, "Unicode property escape \\p");
        return false;
      case 'k':
        --pos_;
        Error(Status::Unsupported, "backreference \\k");
        return false;
      default:
        break;
    }
    if (c >= '1' && c <= '9') {
      --pos_;
      Error(Status::Unsupported, "backreference \\" + std::string(1, static_cast<char>(c)));
      return false;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      --pos_;
      Error(Status::Unsupported, "escape \\" + std::string(1, static_cast<char>(c)));
      return false;
    }
    *cp = c;  // identity escape of punctuation or any other code point
    return true;
  }

  RPtr ParseClass() {
    // pos_ is after '['.
    bool negate = false;
    if (!AtEnd() && Peek() == '^') {
      negate = true;
      ++pos_;
    }
    CpRanges set;
    while (true) {
      if (AtEnd()) {
        Error(Status::InvalidArgument, "unterminated character class");
        return nullptr;
      }
      if (Peek() == ']') {
        ++pos_;
        break;
      }
      CpRanges atom_set;
      uint32_t lo = 0;
      bool lo_is_set = false;
      if (!ClassAtom(&atom_set, &lo, &lo_is_set)) return nullptr;
      if (!AtEnd() && Peek() == '-' && Peek(1) != ']' && pos_ + 1 < p_.size()) {
        const size_t save = pos_;
        ++pos_;
        CpRanges hi_set;
        uint32_t hi = 0;
        bool hi_is_set = false;
        if (!ClassAtom(&hi_set, &hi, &hi_is_set)) return nullptr;
        if (lo_is_set || hi_is_set) {
          // Annex B: `-` next to a class escape is a literal.
          (void)save;
          if (lo_is_set) {
            set.insert(set.end(), atom_set.begin(), atom_set.end());
          } else {
            set.push_back({lo, lo});
          }
          set.push_back({'-', '-'});
          if (hi_is_set) {
            set.insert(set.end(), hi_set.begin(), hi_set.end());
          } else {
            set.push_back({hi, hi});
          }
          continue;
        }
        if (hi < lo) {
          Error(Status::InvalidArgument, "character class range out of order");
          return nullptr;
        }
        set.push_back({lo, hi});
        continue;
      }
      if (lo_is_set) {
        set.insert(set.end(), atom_set.begin(), atom_set.end());
      } else {
        set.push_back({lo, lo});
      }
    }
    NormalizeRanges(&set);
    return MakeSet(negate ? ComplementRanges(set) : set);
  }

  bool ClassAtom(CpRanges* set, uint32_t* cp, bool* is_set) {
    *is_set = false;
    if (Peek() == '\\') {
      ++pos_;
      return ParseEscape(/*in_class=*/true, set, cp, is_set);
    }
    *cp = p_[pos_++];
    return true;
  }

  RPtr ParseAtom(int depth) {
    const uint32_t c = Peek();
    switch (c) {
      case '(': {
        ++pos_;
        if (Peek() == '?') {
          if (Peek(1) == ':') {
            pos_ += 2;
          } else if ((Peek(1) == '<' && Peek(2) != '=' && Peek(2) != '!') || (Peek(1) == 'P' && Peek(2) == '<')) {
            // Named group: the name is only a label.
            while (!AtEnd() && Peek() != '>') ++pos_;
            if (AtEnd()) {
              Error(Status::InvalidArgument, "unterminated group name");
              return nullptr;
            }
            ++pos_;
          } else if (Peek(1) == '=' || Peek(1) == '!') {
            // Lookahead: FromRegex accepts it right after a leading ^ only.
            const bool negative = Peek(1) == '!';
            pos_ += 2;
            RPtr inner = ParseAlt(depth + 1);
            if (Failed()) return nullptr;
            if (AtEnd() || Peek() != ')') {
              Error(Status::InvalidArgument, "unterminated group");
              return nullptr;
            }
            ++pos_;
            auto n = std::make_unique<RNode>();
            n->kind = RNode::kLook;
            n->negative = negative;
            n->kids.push_back(std::move(inner));
            return n;
          } else if (Peek(1) == '<' && (Peek(2) == '=' || Peek(2) == '!')) {
            Error(Status::Unsupported, "lookbehind");
            return nullptr;
          } else {
            Error(Status::Unsupported, "group modifier (?" + std::string(1, static_cast<char>(Peek(1))));
            return nullptr;
          }
        }
        RPtr inner = ParseAlt(depth + 1);
        if (Failed()) return nullptr;
        if (AtEnd() || Peek() != ')') {
          Error(Status::InvalidArgument, "unterminated group");
          return nullptr;
        }
        ++pos_;
        return inner;
      }
      case '[':
        ++pos_;
        return ParseClass();
      case '.':
        ++pos_;
        return MakeSet(DotSet());
      case '^': {
        ++pos_;
        auto n = std::make_unique<RNode>();
        n->kind = RNode::kBol;
        return n;
      }
      case '$': {
        ++pos_;
        auto n = std::make_unique<RNode>();
        n->kind = RNode::kEol;
        return n;
      }
      case '\\': {
        ++pos_;
        CpRanges set;
        uint32_t cp = 0;
        bool is_set = false;
        if (!ParseEscape(/*in_class=*/false, &set, &cp, &is_set)) return nullptr;
        return is_set ? MakeSet(std::move(set)) : MakeSet({{cp, cp}});
      }
      case '*':
      case '+':
      case '?':
        Error(Status::InvalidArgument, "nothing to repeat");
        return nullptr;
      case '{': {
        int64_t a, b;
        const size_t save = pos_;
        if (ReadBraces(&a, &b)) {
          pos_ = save;
          Error(Status::InvalidArgument, "nothing to repeat");
          return nullptr;
        }
        ++pos_;
        return MakeSet({{'{', '{'}});
      }
      default:
        ++pos_;
        return MakeSet({{c, c}});
    }
  }

  std::u32string_view p_;
  size_t pos_ = 0;
  size_t max_repeat_;
  Status status_;
};

// ---------------------------------------------------------------------------------------------
// Thompson NFA.

struct Nfa {
  struct State {
    std::vector<uint32_t> eps;
    std::vector<uint32_t> bol;  // crossed only at the start of the input
    std::vector<uint32_t> eol;  // crossed only at its end
    std::vector<CharDfa::Edge> edges;
  };
  std::vector<State> states;
  uint32_t start = 0, final = 0;
  size_t cap;
  bool over = false;
  bool has_look = false;  // a lookahead FromRegex did not lift out

  uint32_t Add() {
    if (states.size() >= cap) over = true;
    states.emplace_back();
    return static_cast<uint32_t>(states.size() - 1);
  }
  // Returns (start, end) of the fragment for `n`.
  std::pair<uint32_t, uint32_t> Build(const RNode& n) {
    if (over) return {0, 0};
    const uint32_t s = Add(), e = Add();
    switch (n.kind) {
      case RNode::kSet:
        for (const auto& [lo, hi] : n.set) states[s].edges.push_back({lo, hi, e});
        break;
      case RNode::kBol:
        states[s].bol.push_back(e);
        break;
      case RNode::kEol:
        states[s].eol.push_back(e);
        break;
      case RNode::kLook:
        has_look = true;
        break;
      case RNode::kConcat: {
        uint32_t cur = s;
        for (const auto& k : n.kids) {
          auto [ks, ke] = Build(*k);
          if (over) return {0, 0};
          states[cur].eps.push_back(ks);
          cur = ke;
        }
        states[cur].eps.push_back(e);
        break;
      }
      case RNode::kAlt:
        for (const auto& k : n.kids) {
          auto [ks, ke] = Build(*k);
          if (over) return {0, 0};
          states[s].eps.push_back(ks);
          states[ke].eps.push_back(e);
        }
        break;
      case RNode::kRepeat: {
        uint32_t cur = s;
        for (int64_t i = 0; i < n.min; ++i) {
          auto [ks, ke] = Build(*n.kids[0]);
          if (over) return {0, 0};
          states[cur].eps.push_back(ks);
          cur = ke;
        }
        if (n.max < 0) {
          const uint32_t loop = Add();
          states[cur].eps.push_back(loop);
          auto [ks, ke] = Build(*n.kids[0]);
          if (over) return {0, 0};
          states[loop].eps.push_back(ks);
          states[ke].eps.push_back(loop);
          states[loop].eps.push_back(e);
        } else {
          for (int64_t i = n.min; i < n.max; ++i) {
            auto [ks, ke] = Build(*n.kids[0]);
            if (over) return {0, 0};
            states[cur].eps.push_back(ks);
            states[cur].eps.push_back(e);
            cur = ke;
          }
          states[cur].eps.push_back(e);
        }
        break;
      }
    }
    return {s, e};
  }
};

// The states reachable from `set` through ε edges (and `bol` edges when at the start, `eol`
// edges when at the end). Sorted.
std::vector<uint32_t> Closure(const Nfa& nfa, std::vector<uint32_t> set, bool at_start, bool at_end) {
  std::vector<char> seen(nfa.states.size(), 0);
  std::vector<uint32_t> stack;
  for (uint32_t s : set)
    if (!seen[s]) seen[s] = 1, stack.push_back(s);
  std::vector<uint32_t> out;
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    out.push_back(s);
    auto push = [&](const std::vector<uint32_t>& v) {
      for (uint32_t t : v)
        if (!seen[t]) seen[t] = 1, stack.push_back(t);
    };
    push(nfa.states[s].eps);
    if (at_start) push(nfa.states[s].bol);
    if (at_end) push(nfa.states[s].eol);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct VecHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// CharDfa.

bool DecodeUtf8String(std::string_view s, std::u32string* out) {
  out->clear();
  for (size_t pos = 0; pos < s.size();) {
    uint32_t cp;
    const size_t len = DecodeUtf8(s, pos, &cp);
    if (len == 0) return false;
    out->push_back(cp);
    pos += len;
  }
  return true;
}

CharDfa::CharDfa() : states_(1) {}

CharDfa CharDfa::AnyString() {
  CharDfa d;
  d.states_[0].accept = true;
  d.states_[0].edges = UniverseEdges(0);
  return d;
}

CharDfa CharDfa::Literals(const std::vector<std::u32string>& strings) {
  std::vector<State> st(1);
  for (const auto& s : strings) {
    uint32_t cur = 0;
    for (char32_t c : s) {
      if (c >= 0xD800 && c <= 0xDFFF) break;  // not a code point here; the string never matches
      uint32_t next = UINT32_MAX;
      for (const auto& e : st[cur].edges)
        if (e.lo == c) next = e.to;
      if (next == UINT32_MAX) {
        next = static_cast<uint32_t>(st.size());
        st[cur].edges.push_back({static_cast<uint32_t>(c), static_cast<uint32_t>(c), next});
        st.emplace_back();
      }
      cur = next;
    }
    bool surrogate = false;
    for (char32_t c : s) surrogate |= c >= 0xD800 && c <= 0xDFFF;
    if (!surrogate) st[cur].accept = true;
  }
  return FromStates(std::move(st));
}

CharDfa CharDfa::Length(int64_t min, int64_t max) {
  if (min < 0) min = 0;
  std::vector<State> st;
  if (max >= 0) {
    if (max < min) return CharDfa();
    st.resize(static_cast<size_t>(max) + 1);
    for (int64_t i = 0; i <= max; ++i) {
      st[i].accept = i >= min;
      if (i < max) st[i].edges = UniverseEdges(static_cast<uint32_t>(i + 1));
    }
  } else {
    st.resize(static_cast<size_t>(min) + 1);
    for (int64_t i = 0; i <= min; ++i) {
      st[i].accept = i >= min;
      st[i].edges = UniverseEdges(static_cast<uint32_t>(i < min ? i + 1 : i));
    }
  }
  CharDfa d;
  d.states_ = std::move(st);
  return d;  // already trimmed and minimal
}

namespace {

// The DFA of a syntax tree (lookaheads already lifted out).
Result<CharDfa> TreeDfa(const RNode& tree, bool search, size_t max_states) {
  Nfa nfa;
  nfa.cap = std::max<size_t>(max_states * 8, 20000);
  const uint32_t pre = nfa.Add();
  auto [ps, pe] = nfa.Build(tree);
  if (nfa.over) return Status::ResourceExhausted("pattern is too large");
  if (nfa.has_look) return Status::Unsupported("lookahead other than right after a leading ^");
  const uint32_t fin = nfa.Add();
  nfa.states[pre].eps.push_back(ps);
  nfa.states[pe].eps.push_back(fin);
  if (search) {
    // Unanchored search: any text before (a loop on the entry) and after (a loop on the end).
    nfa.states[pre].edges = UniverseEdges(pre);
    nfa.states[fin].edges = UniverseEdges(fin);
  }
  nfa.start = pre;
  nfa.final = fin;

  using Edge = CharDfa::Edge;
  std::vector<CharDfa::State> out;
  std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> ids;
  std::vector<std::vector<uint32_t>> sets;
  auto intern = [&](std::vector<uint32_t> set) -> uint32_t {
    auto it = ids.find(set);
    if (it != ids.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(sets.size());
    ids.emplace(set, id);
    sets.push_back(std::move(set));
    out.emplace_back();
    return id;
  };
  intern(Closure(nfa, {nfa.start}, /*at_start=*/true, false));
  for (size_t d = 0; d < sets.size(); ++d) {
    if (sets.size() > max_states) return Status::ResourceExhausted("pattern needs more than " +
                                                                   std::to_string(max_states) + " automaton states");
    const std::vector<uint32_t> set = sets[d];
    // Acceptance: the final state through ε and end-of-input assertions (and start-of-input ones
    // for the initial state, where nothing was read yet).
    const std::vector<uint32_t> end_closure = Closure(nfa, set, d == 0, true);
    out[d].accept = std::binary_search(end_closure.begin(), end_closure.end(), nfa.final);
    std::vector<const Edge*> edges;
    std::vector<uint32_t> points;
    for (uint32_t st : set)
      for (const auto& e : nfa.states[st].edges) {
        edges.push_back(&e);
        points.push_back(e.lo);
        points.push_back(e.hi + 1);
      }
    if (edges.empty()) continue;
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::sort(edges.begin(), edges.end(), [](const Edge* a, const Edge* b) { return a->lo < b->lo; });
    std::vector<Edge> dedges;
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const uint32_t lo = points[i], hi = points[i + 1] - 1;
      std::vector<uint32_t> targets;
      for (const Edge* e : edges) {
        if (e->lo > lo) break;
        if (e->hi >= hi) targets.push_back(e->to);
      }
      if (targets.empty()) continue;
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      const uint32_t to = intern(Closure(nfa, std::move(targets), false, false));
      dedges.push_back({lo, hi, to});
    }
    out[d].edges = std::move(dedges);
  }
  return CharDfa::FromStates(std::move(out));
}

}  // namespace

Result<CharDfa> CharDfa::FromRegex(std::string_view pattern, bool search, size_t max_states, size_t max_repeat) {
  std::u32string cps;
  if (!DecodeUtf8String(pattern, &cps)) return Status::InvalidArgument("pattern is not valid UTF-8");
  RegexParser parser(cps, max_repeat);
  auto parsed = parser.Parse();
  if (!parsed.ok()) return parsed.status();
  RPtr tree = std::move(parsed).value();
  // Top-level alternatives; each may start with ^ and lookaheads, which become an intersection
  // (or a difference, for (?!X)) with the strings that start with X.
  std::vector<RPtr> alts;
  if (tree->kind == RNode::kAlt) {
    alts = std::move(tree->kids);
  } else {
    alts.push_back(std::move(tree));
  }
  CharDfa result;
  for (RPtr& alt : alts) {
    std::vector<RPtr> looks;
    if (alt->kind == RNode::kConcat && !alt->kids.empty() && alt->kids[0]->kind == RNode::kBol) {
      while (alt->kids.size() > 1 && alt->kids[1]->kind == RNode::kLook) {
        looks.push_back(std::move(alt->kids[1]));
        alt->kids.erase(alt->kids.begin() + 1);
      }
    }
    RS_ASSIGN_OR_RETURN(CharDfa d, TreeDfa(*alt, search, max_states));
    for (RPtr& look : looks) {
      auto anchored = std::make_unique<RNode>();
      anchored->kind = RNode::kConcat;
      auto bol = std::make_unique<RNode>();
      bol->kind = RNode::kBol;
      anchored->kids.push_back(std::move(bol));
      anchored->kids.push_back(std::move(look->kids[0]));
      RS_ASSIGN_OR_RETURN(CharDfa prefix, TreeDfa(*anchored, /*search=*/true, max_states));
      RS_ASSIGN_OR_RETURN(d, Combine(d, prefix, look->negative ? Op::kMinus : Op::kAnd, max_states));
    }
    RS_ASSIGN_OR_RETURN(result, Combine(result, d, Op::kOr, max_states));
  }
  return result;
}

CharDfa CharDfa::FromStates(std::vector<State> states) {
  CharDfa d;
  d.states_ = std::move(states);
  if (d.states_.empty()) d.states_.resize(1);
  d.Normalize();
  return d;
}

void CharDfa::Normalize(bool minimize) {
  const size_t n = states_.size();
  for (auto& s : states_) CanonicalEdges(&s.edges);
  // Trim: reachable from the start and able to reach acceptance.
  std::vector<char> reach(n, 0), live(n, 0);
  std::vector<uint32_t> stack{0};
  reach[0] = 1;
  std::vector<std::vector<uint32_t>> rev(n);
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (const auto& e : states_[s].edges) {
      rev[e.to].push_back(s);
      if (!reach[e.to]) reach[e.to] = 1, stack.push_back(e.to);
    }
  }
  for (size_t s = 0; s < n; ++s)
    if (reach[s] && states_[s].accept) live[s] = 1, stack.push_back(static_cast<uint32_t>(s));
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t p : rev[s])
      if (!live[p]) live[p] = 1, stack.push_back(p);
  }
  if (!live[0]) {
    states_.assign(1, State{});
    return;
  }
  if (!minimize) {
    // Trim only: renumber the live states.
    std::vector<uint32_t> id(n, UINT32_MAX);
    std::vector<State> out;
    std::deque<uint32_t> q{0};
    id[0] = 0;
    out.emplace_back();
    while (!q.empty()) {
      const uint32_t s = q.front();
      q.pop_front();
      for (const auto& e : states_[s].edges)
        if (live[e.to] && id[e.to] == UINT32_MAX) {
          id[e.to] = static_cast<uint32_t>(out.size());
          out.emplace_back();
          q.push_back(e.to);
        }
    }
    for (size_t s = 0; s < n; ++s) {
      if (id[s] == UINT32_MAX) continue;
      State& st = out[id[s]];
      st.accept = states_[s].accept;
      for (const auto& e : states_[s].edges)
        if (live[e.to]) st.edges.push_back({e.lo, e.hi, id[e.to]});
      CanonicalEdges(&st.edges);
    }
    states_ = std::move(out);
    return;
  }
  // Minimize (Moore): refine classes by (accept, edges to classes) until stable.
  std::vector<uint32_t> cls(n, UINT32_MAX);
  std::vector<uint32_t> keep;
  for (size_t s = 0; s < n; ++s)
    if (live[s]) keep.push_back(static_cast<uint32_t>(s));
  for (uint32_t s : keep) cls[s] = states_[s].accept ? 1 : 0;
  size_t count = 0;
  while (true) {
    std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> sig_ids;
    std::vector<uint32_t> next(n, UINT32_MAX);
    for (uint32_t s : keep) {
      std::vector<uint32_t> sig{cls[s]};
      uint32_t prev_to = UINT32_MAX, prev_hi = 0;
      for (const auto& e : states_[s].edges) {
        if (!live[e.to]) continue;
        const uint32_t c = cls[e.to];
        if (c == prev_to && (prev_hi + 1 == e.lo || (prev_hi == 0xD7FF && e.lo == 0xE000))) {
          sig.back() = e.hi;
        } else {
          sig.push_back(e.lo);
          sig.push_back(c);
          sig.push_back(e.hi);
        }
        prev_to = c;
        prev_hi = e.hi;
      }
      auto [it, inserted] = sig_ids.emplace(std::move(sig), static_cast<uint32_t>(sig_ids.size()));
      next[s] = it->second;
    }
    const size_t new_count = sig_ids.size();
    cls = std::move(next);
    if (new_count == count) break;
    count = new_count;
  }
  // Renumber classes so the start's class is 0 (in BFS order from the start).
  std::vector<uint32_t> order(count, UINT32_MAX);
  std::vector<uint32_t> rep(count, UINT32_MAX);
  for (uint32_t s : keep)
    if (rep[cls[s]] == UINT32_MAX) rep[cls[s]] = s;
  std::deque<uint32_t> q{cls[0]};
  uint32_t next_id = 0;
  order[cls[0]] = next_id++;
  std::vector<State> out;
  while (!q.empty()) {
    const uint32_t c = q.front();
    q.pop_front();
    for (const auto& e : states_[rep[c]].edges) {
      if (!live[e.to]) continue;
      const uint32_t tc = cls[e.to];
      if (order[tc] == UINT32_MAX) order[tc] = next_id++, q.push_back(tc);
    }
  }
  out.resize(next_id);
  for (uint32_t c = 0; c < count; ++c) {
    if (order[c] == UINT32_MAX) continue;
    State& st = out[order[c]];
    st.accept = states_[rep[c]].accept;
    for (const auto& e : states_[rep[c]].edges)
      if (live[e.to]) st.edges.push_back({e.lo, e.hi, order[cls[e.to]]});
    CanonicalEdges(&st.edges);
  }
  states_ = std::move(out);
}

Result<CharDfa> CharDfa::Combine(const CharDfa& a, const CharDfa& b, Op op, size_t max_states, bool minimize) {
  // Product over pairs; UINT32_MAX stands for the dead state of an incomplete DFA.
  constexpr uint32_t kDead = UINT32_MAX;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::vector<State> out;
  auto accept = [&](uint32_t x, uint32_t y) {
    const bool ax = x != kDead && a.states_[x].accept, by = y != kDead && b.states_[y].accept;
    switch (op) {
      case Op::kAnd: return ax && by;
      case Op::kOr: return ax || by;
      case Op::kMinus: return ax && !by;
    }
    return false;
  };
  auto intern = [&](uint32_t x, uint32_t y) {
    auto [it, inserted] = ids.emplace(std::make_pair(x, y), static_cast<uint32_t>(pairs.size()));
    if (inserted) {
      pairs.push_back({x, y});
      out.emplace_back();
    }
    return it->second;
  };
  intern(0, 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs.size() > max_states)
      return Status::ResourceExhausted("string constraints need more than " + std::to_string(max_states) +
                                       " automaton states");
    const auto [x, y] = pairs[i];
    out[i].accept = accept(x, y);
    static const std::vector<Edge> kNone;
    const auto& ea = x == kDead ? kNone : a.states_[x].edges;
    const auto& eb = y == kDead ? kNone : b.states_[y].edges;
    std::vector<uint32_t> points;
    for (const auto& e : ea) points.push_back(e.lo), points.push_back(e.hi + 1);
    for (const auto& e : eb) points.push_back(e.lo), points.push_back(e.hi + 1);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    size_t ia = 0, ib = 0;
    std::vector<Edge> edges;
    for (size_t k = 0; k + 1 < points.size(); ++k) {
      const uint32_t lo = points[k], hi = points[k + 1] - 1;
      while (ia < ea.size() && ea[ia].hi < lo) ++ia;
      while (ib < eb.size() && eb[ib].hi < lo) ++ib;
      const uint32_t ta = ia < ea.size() && ea[ia].lo <= lo ? ea[ia].to : kDead;
      const uint32_t tb = ib < eb.size() && eb[ib].lo <= lo ? eb[ib].to : kDead;
      if (ta == kDead && (op != Op::kOr || tb == kDead)) continue;
      if (op == Op::kAnd && tb == kDead) continue;
      edges.push_back({lo, hi, intern(ta, tb)});
    }
    out[i].edges = std::move(edges);
  }
  CharDfa d;
  d.states_ = std::move(out);
  d.Normalize(minimize);
  return d;
}

CharDfa CharDfa::Complement() const {
  // Complete with a sink, then flip acceptance.
  std::vector<State> st = states_;
  const uint32_t sink = static_cast<uint32_t>(st.size());
  st.emplace_back();
  st[sink].edges = UniverseEdges(sink);
  for (uint32_t s = 0; s < sink; ++s) {
    CpRanges covered;
    for (const auto& e : st[s].edges) covered.push_back({e.lo, e.hi});
    NormalizeRanges(&covered);
    for (const auto& [lo, hi] : ComplementRanges(covered)) st[s].edges.push_back({lo, hi, sink});
  }
  for (auto& s : st) s.accept = !s.accept;
  return FromStates(std::move(st));
}

bool CharDfa::IsUniversal() const { return Complement().IsEmpty(); }

bool CharDfa::Matches(std::u32string_view s) const {
  uint32_t cur = 0;
  for (char32_t c : s) {
    const auto& edges = states_[cur].edges;
    auto it = std::upper_bound(edges.begin(), edges.end(), static_cast<uint32_t>(c),
                               [](uint32_t v, const Edge& e) { return v < e.lo; });
    if (it == edges.begin()) return false;
    --it;
    if (static_cast<uint32_t>(c) > it->hi) return false;
    cur = it->to;
  }
  return states_[cur].accept;
}

std::u32string CharDfa::Example() const {
  std::vector<uint32_t> parent(states_.size(), UINT32_MAX);
  std::vector<char32_t> via(states_.size(), 0);
  std::deque<uint32_t> q{0};
  parent[0] = 0;
  while (!q.empty()) {
    const uint32_t s = q.front();
    q.pop_front();
    if (states_[s].accept) {
      std::u32string out;
      for (uint32_t cur = s; cur != 0; cur = parent[cur]) out.push_back(via[cur]);
      std::reverse(out.begin(), out.end());
      return out;
    }
    for (const auto& e : states_[s].edges)
      if (parent[e.to] == UINT32_MAX) {
        parent[e.to] = s;
        // Prefer a printable ASCII character of the range.
        via[e.to] = e.lo <= 'a' && e.hi >= 'a' ? U'a' : static_cast<char32_t>(e.lo);
        q.push_back(e.to);
      }
  }
  return U"";
}

// ---------------------------------------------------------------------------------------------
// Emission.

Symbol JsonStringEmitter::Class(const CpRanges& set_in) {
  auto it = classes_.find(set_in);
  if (it != classes_.end()) return it->second;
  GrammarBuilder& b = *b_;
  CpRanges set = WithoutSurrogates(set_in);
  std::vector<Sequence> alts;
  CpRanges raw = SubtractRange(SubtractRange(SubtractRange(set, 0, 0x1F), '"', '"'), '\\', '\\');
  if (!raw.empty()) alts.push_back(CodepointSetSymbols(b, raw, "chr"));
  if (RangesContain(set, '"')) alts.push_back(b.Literal("\\\""));
  if (RangesContain(set, '\\')) alts.push_back(b.Literal("\\\\"));
  if (RangesContain(set, '/')) alts.push_back(b.Literal("\\/"));
  static const std::pair<uint32_t, char> kShort[] = {{0x08, 'b'}, {0x0C, 'f'}, {0x0A, 'n'}, {0x0D, 'r'}, {0x09, 't'}};
  for (const auto& [cp, ch] : kShort)
    if (RangesContain(set, cp)) alts.push_back({b.Byte('\\'), b.Byte(static_cast<uint8_t>(ch))});
  // Controls as \u00XX, either hex case.
  for (uint32_t high = 0; high < 2; ++high) {
    ByteSet low;
    for (uint32_t v = 0; v < 16; ++v) {
      if (!RangesContain(set, high * 16 + v)) continue;
      if (v < 10) {
        low.Add(static_cast<uint8_t>('0' + v));
      } else {
        low.Add(static_cast<uint8_t>('a' + v - 10));
        low.Add(static_cast<uint8_t>('A' + v - 10));
      }
    }
    if (low.Empty()) continue;
    Sequence seq = b.Literal(high == 0 ? "\\u000" : "\\u001");
    seq.push_back(b.Bytes(low));
    alts.push_back(std::move(seq));
  }
  Symbol out;
  if (alts.size() == 1 && alts[0].size() == 1) {
    out = alts[0][0];
  } else {
    out = b.Choice(std::move(alts), "chr");
  }
  classes_.emplace(set_in, out);
  return out;
}

Symbol JsonStringEmitter::Emit(const CharDfa& dfa, std::string_view name) {
  GrammarBuilder& b = *b_;
  const auto& st = dfa.states();
  std::vector<uint32_t> rules(st.size());
  for (size_t s = 0; s < st.size(); ++s) rules[s] = b.NewRule(std::string(name) + "-s");
  for (size_t s = 0; s < st.size(); ++s) {
    std::map<uint32_t, CpRanges> by_target;
    for (const auto& e : st[s].edges) by_target[e.to].push_back({e.lo, e.hi});
    for (auto& [to, ranges] : by_target) {
      NormalizeRanges(&ranges);
      b.AddAlternative(rules[s], {Class(ranges), Symbol::Rule(rules[to])});
    }
    if (st[s].accept) b.AddAlternative(rules[s], {});
  }
  const uint32_t r = b.NewRule(name);
  b.AddAlternative(r, {b.Byte('"'), Symbol::Rule(rules[0]), b.Byte('"')});
  return Symbol::Rule(r);
}

}  // namespace radixserve::grammar::internal
