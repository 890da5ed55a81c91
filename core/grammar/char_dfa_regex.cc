// CharDfa::FromRegex (see char_dfa.h): the regex parser (the ECMAScript subset of regex.h; `.`,
// `$` and \s as the reference validator, Python's re, reads them), Thompson NFA with start / end
// assertions, and the subset construction. A
// lookahead right after a leading ^ becomes an intersection (or difference) with the strings
// that start with its body.
#include <algorithm>
#include <memory>
#include <unordered_map>
#include <utility>

#include "core/grammar/char_dfa.h"

namespace radixserve::grammar::internal {

namespace {

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
// \s as the reference validator (Python's re) reads it, not ECMAScript's: U+001C..U+001F and
// U+0085 are whitespace there and U+FEFF is not. Generated strings must pass that validator,
// and a class like [^\s] would otherwise let through what it calls whitespace.
CpRanges SpaceSet() {
  return {{0x09, 0x0D}, {0x1C, 0x20}, {0x85, 0x85},     {0xA0, 0xA0},     {0x1680, 0x1680},
          {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}};
}
// `.` as Python's re has it (without DOTALL): anything but \n.
CpRanges DotSet() { return {{0, 0x09}, {0x0B, kMaxCodepoint}}; }

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
  bool python_dollar = true;
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
      case RNode::kEol: {
        states[s].eol.push_back(e);
        if (python_dollar) {
          // Python's $ (without MULTILINE): also before a \n that ends the text.
          const uint32_t nl = Add();
          states[s].edges.push_back({'\n', '\n', nl});
          states[nl].eol.push_back(e);
        }
        break;
      }
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




// The DFA of a syntax tree (lookaheads already lifted out).
Result<CharDfa> TreeDfa(const RNode& tree, bool search, size_t max_states, const std::function<bool()>& keep_going,
                        bool python_dollar) {
  Nfa nfa;
  nfa.python_dollar = python_dollar;
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
  std::unordered_map<std::vector<uint32_t>, uint32_t, StateSetHash> ids;
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
    if ((d & 127) == 127 && keep_going && !keep_going())
      return Status::ResourceExhausted("compile ran past its time cap");
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

Result<CharDfa> CharDfa::FromRegex(std::string_view pattern, bool search, size_t max_states, size_t max_repeat,
                                   const std::function<bool()>& keep_going, bool python_dollar) {
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
    RS_ASSIGN_OR_RETURN(CharDfa d, TreeDfa(*alt, search, max_states, keep_going, python_dollar));
    for (RPtr& look : looks) {
      auto anchored = std::make_unique<RNode>();
      anchored->kind = RNode::kConcat;
      auto bol = std::make_unique<RNode>();
      bol->kind = RNode::kBol;
      anchored->kids.push_back(std::move(bol));
      anchored->kids.push_back(std::move(look->kids[0]));
      RS_ASSIGN_OR_RETURN(CharDfa prefix, TreeDfa(*anchored, /*search=*/true, max_states, keep_going, python_dollar));
      RS_ASSIGN_OR_RETURN(d, Combine(d, prefix, look->negative ? Op::kMinus : Op::kAnd, max_states, true, keep_going));
    }
    RS_ASSIGN_OR_RETURN(result, Combine(result, d, Op::kOr, max_states, true, keep_going));
  }
  return result;
}


}  // namespace radixserve::grammar::internal
