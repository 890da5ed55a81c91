// Regex front-end (see regex.h). Two steps: a recursive-descent parser turns the pattern into a
// small syntax tree (sets of code points, concatenation, alternation, repetition), then an
// emitter writes the tree into the GrammarBuilder.
//
// The one subtle part of the emitter is repetition of a nullable body, e.g. (a?)* or (x*y*)+:
// the builder spells unbounded repetition with right recursion (R ::= X R | ε), which is left
// recursive through a nullable prefix when X matches the empty string, and Finish refuses that.
// Since X{m,n} = (X \ ε){0,n} whenever X is nullable, the emitter repeats "X without the empty
// string" instead (EmitNonNull), so every repeated body it hands to the builder is non-nullable.
//
// Anchors are nodes of the tree too. The parser accepts `^` only where nothing can have been
// matched before it (at the start of a top-level alternative, or at the start of a group that is
// itself in such a place, e.g. (^a|b)c), and `$` symmetrically at ends, never under a
// quantifier. For search semantics the emitter then walks the leading and trailing edges of the
// tree (EmitEdges): the free text before a match goes in front of each leading alternative that
// has no `^`, the free text after it behind each trailing alternative that has no `$`.
#include "core/grammar/regex.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/grammar/codepoint_util.h"

namespace radixserve::grammar {
namespace {

using internal::ClassEscapeSets;
using internal::CpRanges;
using internal::kMaxCodepoint;

// Groups nested deeper than this are refused: parsing and emitting recurse once per level.
constexpr int kMaxNesting = 256;
// Longer patterns are cut in error messages.
constexpr size_t kMaxShownPattern = 120;

struct Node;
using NodePtr = std::unique_ptr<Node>;

constexpr size_t kNoAnchor = ~size_t{0};

// A node of the regex syntax tree. `nullable`: the node matches the empty string.
struct Node {
  enum Kind : uint8_t { kEmpty, kSet, kConcat, kAlt, kRepeat, kStart, kEnd };  // kStart: ^, kEnd: $
  Kind kind = kEmpty;
  bool nullable = true;
  CpRanges set;               // kSet: normalized; empty = matches nothing
  std::vector<NodePtr> kids;  // kConcat, kAlt: the parts; kRepeat: the body
  int64_t min = 0, max = 0;   // kRepeat; max < 0 = unbounded
  // Offsets of the first ^ and $ in this subtree (kNoAnchor: none), for checks and errors.
  size_t start_anchor = kNoAnchor;
  size_t end_anchor = kNoAnchor;

  bool is_anchor() const { return kind == kStart || kind == kEnd; }
};

NodePtr MakeEmpty() { return std::make_unique<Node>(); }

NodePtr MakeAnchor(Node::Kind kind, size_t offset) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  (kind == Node::kStart ? n->start_anchor : n->end_anchor) = offset;
  return n;
}

// Carries the kids' anchor offsets up to their parent.
void InheritAnchors(Node* n) {
  for (const auto& k : n->kids) {
    n->start_anchor = std::min(n->start_anchor, k->start_anchor);
    n->end_anchor = std::min(n->end_anchor, k->end_anchor);
  }
}

NodePtr MakeSet(CpRanges set) {
  auto n = std::make_unique<Node>();
  n->kind = Node::kSet;
  n->nullable = false;
  internal::NormalizeRanges(&set);
  n->set = std::move(set);
  return n;
}

NodePtr MakeConcat(std::vector<NodePtr> kids) {
  // Empty parts, such as (), match nothing and would only hide an anchor from the edge walk.
  std::erase_if(kids, [](const NodePtr& k) { return k->kind == Node::kEmpty; });
  if (kids.empty()) return MakeEmpty();
  if (kids.size() == 1) return std::move(kids[0]);
  auto n = std::make_unique<Node>();
  n->kind = Node::kConcat;
  n->nullable = true;
  for (const auto& k : kids) n->nullable = n->nullable && k->nullable;
  n->kids = std::move(kids);
  InheritAnchors(n.get());
  return n;
}

NodePtr MakeAlt(std::vector<NodePtr> kids) {
  if (kids.size() == 1) return std::move(kids[0]);
  auto n = std::make_unique<Node>();
  n->kind = Node::kAlt;
  n->nullable = false;
  for (const auto& k : kids) n->nullable = n->nullable || k->nullable;
  n->kids = std::move(kids);
  InheritAnchors(n.get());
  return n;
}

NodePtr MakeRepeat(NodePtr body, int64_t min, int64_t max) {
  auto n = std::make_unique<Node>();
  n->kind = Node::kRepeat;
  n->nullable = min == 0 || body->nullable;
  n->min = min;
  n->max = max;
  n->kids.push_back(std::move(body));
  InheritAnchors(n.get());
  return n;
}

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
bool IsAsciiAlnum(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Recursive-descent parser for the ECMAScript pattern grammar (ECMA-262 22.2.1, with the Annex B
// leniencies listed in regex.h).
class Parser {
 public:
  Parser(std::string_view pattern, size_t max_repeat) : p_(pattern), max_repeat_(max_repeat) {}

  // The whole pattern.
  Result<NodePtr> Parse() {
    auto node = ParseDisjunction(0);
    if (!node.ok()) return node.status();
    if (!AtEnd()) return Error(StatusCode::kInvalidArgument, pos_, "unmatched )");
    return node;
  }

 private:
  // An escape's meaning: a single code point or a class escape like \d.
  struct Atom {
    bool is_set = false;
    uint32_t cp = 0;
    ClassEscapeSets sets;  // see codepoint_util.h: narrow where it adds, wide where it excludes
  };

  bool AtEnd() const { return pos_ >= p_.size(); }
  int Peek(size_t ahead = 0) const {
    return pos_ + ahead < p_.size() ? static_cast<unsigned char>(p_[pos_ + ahead]) : -1;
  }

  Status Error(StatusCode code, size_t offset, const std::string& what) const {
    return Status(code, "regex \"" + internal::PrintableText(p_, kMaxShownPattern) + "\" at offset " +
                            std::to_string(offset) + ": " + what);
  }

  // Alternatives separated by '|' up to ')' or the end.
  Result<NodePtr> ParseDisjunction(int depth) {
    std::vector<NodePtr> alts;
    while (true) {
      auto node = ParseAlternative(depth);
      if (!node.ok()) return node.status();
      alts.push_back(std::move(node).value());
      if (Peek() != '|') break;
      ++pos_;
    }
    return MakeAlt(std::move(alts));
  }

  // Terms up to '|', ')' or the end.
  Result<NodePtr> ParseAlternative(int depth) {
    std::vector<NodePtr> kids;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      NodePtr node;
      if (Peek() == '^' || Peek() == '$') {
        node = MakeAnchor(Peek() == '^' ? Node::kStart : Node::kEnd, pos_);
        ++pos_;
      } else {
        auto atom = ParseAtom(depth);
        if (!atom.ok()) return atom.status();
        node = std::move(atom).value();
      }
      const size_t quantifier_at = pos_;
      int64_t min = 1, max = 1;
      bool quantified = false;
      RS_RETURN_IF_ERROR(ParseQuantifier(&min, &max, &quantified));
      if (quantified) {
        if (node->is_anchor()) {
          return Error(StatusCode::kInvalidArgument, quantifier_at, "nothing to repeat (a quantifier follows an anchor)");
        }
        if (node->start_anchor != kNoAnchor || node->end_anchor != kNoAnchor) {
          return Error(StatusCode::kUnsupported, std::min(node->start_anchor, node->end_anchor),
                       "an anchor inside a quantified group is not supported");
        }
        if (min != 1 || max != 1) node = MakeRepeat(std::move(node), min, max);  // x{1} is x
        // ECMAScript refuses a quantifier on a quantifier (a** or a{2}{3}).
        bool again = false;
        const size_t second = pos_;
        int64_t unused_min = 0, unused_max = 0;
        RS_RETURN_IF_ERROR(ParseQuantifier(&unused_min, &unused_max, &again));
        if (again) {
          return Error(StatusCode::kInvalidArgument, second, "nothing to repeat (a quantifier follows a quantifier)");
        }
      }
      kids.push_back(std::move(node));
    }
    RS_RETURN_IF_ERROR(CheckAnchors(kids));
    return MakeConcat(std::move(kids));
  }

  // A ^ must have nothing that can match text before it in its alternative, and a $ nothing
  // after it; the parent alternative checks the same of the group holding them.
  Status CheckAnchors(const std::vector<NodePtr>& kids) const {
    const auto consumes = [](const NodePtr& k) { return !k->is_anchor() && k->kind != Node::kEmpty; };
    bool consumed = false;
    for (const auto& k : kids) {
      if (consumed && k->start_anchor != kNoAnchor) {
        return Error(StatusCode::kUnsupported, k->start_anchor,
                     "anchor ^ is only supported where nothing can precede it (the start of the pattern, of a "
                     "top-level alternative, or of a group there)");
      }
      consumed = consumed || consumes(k);
    }
    consumed = false;
    for (size_t i = kids.size(); i-- > 0;) {
      const auto& k = kids[i];
      if (consumed && k->end_anchor != kNoAnchor) {
        return Error(StatusCode::kUnsupported, k->end_anchor,
                     "anchor $ is only supported where nothing can follow it (the end of the pattern, of a "
                     "top-level alternative, or of a group there)");
      }
      consumed = consumed || consumes(k);
    }
    return Status::Ok();
  }

  // A quantifier at pos_ (with its lazy '?'), or *found = false and nothing consumed.
  Status ParseQuantifier(int64_t* min, int64_t* max, bool* found) {
    *found = false;
    const size_t start = pos_;
    const int c = Peek();
    if (c == '*') {
      *min = 0, *max = -1, ++pos_;
    } else if (c == '+') {
      *min = 1, *max = -1, ++pos_;
    } else if (c == '?') {
      *min = 0, *max = 1, ++pos_;
    } else if (c == '{') {
      size_t end;
      if (!ParseBraces(pos_, min, max, &end)) return Status::Ok();  // a literal '{' (Annex B)
      pos_ = end;
      if (*max >= 0 && *min > *max) {
        return Error(StatusCode::kInvalidArgument, start, "numbers out of order in {n,m} quantifier");
      }
      const auto over = [&](int64_t v) { return v > static_cast<int64_t>(max_repeat_); };
      if (over(*min) || over(*max)) {
        return Error(StatusCode::kResourceExhausted, start,
                     "repetition " + std::string(p_.substr(start, end - start)) + " is over the limit of " +
                         std::to_string(max_repeat_));
      }
    } else {
      return Status::Ok();
    }
    *found = true;
    if (Peek() == '?') ++pos_;  // lazy: the same language
    return Status::Ok();
  }

  // {n} {n,} {n,m} at `at`; false when the text there is not such a quantifier.
  bool ParseBraces(size_t at, int64_t* min, int64_t* max, size_t* end) const {
    size_t i = at + 1;
    const auto number = [&](int64_t* v) {
      const size_t first = i;
      *v = 0;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') {
        // Saturate: anything this large is refused by the repeat limit anyway.
        if (*v < (int64_t{1} << 40)) *v = *v * 10 + (p_[i] - '0');
        ++i;
      }
      return i > first;
    };
    if (!number(min)) return false;
    if (i < p_.size() && p_[i] == '}') {
      *max = *min;
    } else if (i < p_.size() && p_[i] == ',') {
      ++i;
      if (!number(max)) *max = -1;
      if (i >= p_.size() || p_[i] != '}') return false;
    } else {
      return false;
    }
    *end = i + 1;
    return true;
  }

  Result<NodePtr> ParseAtom(int depth) {
    const size_t start = pos_;
    const int c = Peek();
    switch (c) {
      case '(': return ParseGroup(depth);
      case '[': return ParseClass();
      case '.':
        ++pos_;
        return MakeSet(internal::EcmaDotSet());
      case '\\': {
        Atom a;
        RS_RETURN_IF_ERROR(ParseEscape(/*in_class=*/false, &a));
        if (a.is_set) return MakeSet(std::move(a.sets.narrow));
        return LiteralNode(a.cp, start);
      }
      case '*':
      case '+':
      case '?':
        return Error(StatusCode::kInvalidArgument, start,
                     std::string("nothing to repeat before ") + static_cast<char>(c));
      case '{': {
        int64_t min, max;
        size_t end;
        if (ParseBraces(pos_, &min, &max, &end)) {
          return Error(StatusCode::kInvalidArgument, start, "nothing to repeat before {");
        }
        ++pos_;
        return MakeSet({{'{', '{'}});
      }
      default: {
        uint32_t cp = 0;
        const size_t len = internal::DecodeUtf8(p_, pos_, &cp);
        if (len == 0) return Error(StatusCode::kInvalidArgument, start, "invalid UTF-8");
        pos_ += len;
        return MakeSet({{cp, cp}});
      }
    }
  }

  // A single code point from an escape outside a class: a lone surrogate cannot be UTF-8 text.
  Result<NodePtr> LiteralNode(uint32_t cp, size_t start) {
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      char buf[16];
      snprintf(buf, sizeof(buf), "\\u%04X", cp);
      return Error(StatusCode::kUnsupported, start,
                   std::string("lone surrogate ") + buf + " cannot appear in UTF-8 text");
    }
    return MakeSet({{cp, cp}});
  }

  Result<NodePtr> ParseGroup(int depth) {
    const size_t start = pos_;
    if (depth + 1 > kMaxNesting) {
      return Error(StatusCode::kUnsupported, start, "groups nested deeper than " + std::to_string(kMaxNesting));
    }
    ++pos_;  // '('
    if (Peek() == '?') {
      const int c1 = Peek(1), c2 = Peek(2);
      if (c1 == ':') {
        pos_ += 2;
      } else if (c1 == '=') {
        return Error(StatusCode::kUnsupported, start, "lookahead (?= is not supported");
      } else if (c1 == '!') {
        return Error(StatusCode::kUnsupported, start, "negative lookahead (?! is not supported");
      } else if (c1 == '<' && c2 == '=') {
        return Error(StatusCode::kUnsupported, start, "lookbehind (?<= is not supported");
      } else if (c1 == '<' && c2 == '!') {
        return Error(StatusCode::kUnsupported, start, "negative lookbehind (?<! is not supported");
      } else if (c1 == '<') {
        pos_ += 2;
        RS_RETURN_IF_ERROR(ParseGroupName(start));
      } else if ((c1 >= 'a' && c1 <= 'z') || (c1 >= 'A' && c1 <= 'Z') || c1 == '-') {
        std::string shown = "(?";
        shown.push_back(static_cast<char>(c1));
        return Error(StatusCode::kUnsupported, start, "inline modifier " + shown + " is not supported");
      } else {
        return Error(StatusCode::kInvalidArgument, start, "invalid group: (? must be followed by : = ! or <");
      }
    }
    auto body = ParseDisjunction(depth + 1);
    if (!body.ok()) return body.status();
    if (Peek() != ')') return Error(StatusCode::kInvalidArgument, start, "missing ) for the group opened here");
    ++pos_;
    return body;
  }

  // The name of (?<name> ...) up to and including '>'. Names are identifiers: ASCII letters,
  // digits (not first), '_' and '$', or any non-ASCII code point.
  Status ParseGroupName(size_t group_start) {
    const size_t first = pos_;
    while (!AtEnd() && Peek() != '>') {
      uint32_t cp = 0;
      const size_t len = internal::DecodeUtf8(p_, pos_, &cp);
      if (len == 0) return Error(StatusCode::kInvalidArgument, pos_, "invalid UTF-8");
      const bool ok = IsAsciiAlnum(cp) || cp == '_' || cp == '$' || cp >= 0x80;
      if (!ok || (pos_ == first && cp >= '0' && cp <= '9')) {
        return Error(StatusCode::kInvalidArgument, pos_, "invalid character in a group name");
      }
      pos_ += len;
    }
    if (AtEnd() || pos_ == first) {
      return Error(StatusCode::kInvalidArgument, group_start, "invalid group name in (?<name>...)");
    }
    ++pos_;  // '>'
    return Status::Ok();
  }

  // [...] or [^...]; ECMAScript: [] matches nothing, [^] any code point.
  Result<NodePtr> ParseClass() {
    const size_t start = pos_;
    ++pos_;  // '['
    bool negated = false;
    if (Peek() == '^') {
      negated = true;
      ++pos_;
    }
    // A negated class excludes what either engine puts in its class escapes (ClassEscapeSets).
    CpRanges set;
    const auto add = [&](const Atom& a) {
      if (!a.is_set) {
        set.emplace_back(a.cp, a.cp);
      } else {
        const CpRanges& s = negated ? a.sets.wide : a.sets.narrow;
        set.insert(set.end(), s.begin(), s.end());
      }
    };
    while (true) {
      if (AtEnd()) return Error(StatusCode::kInvalidArgument, start, "unterminated character class");
      if (Peek() == ']') break;
      const size_t lo_offset = pos_;
      Atom lo;
      RS_RETURN_IF_ERROR(ParseClassAtom(&lo));
      if (Peek() == '-' && Peek(1) != ']' && Peek(1) != -1) {
        ++pos_;  // '-'
        Atom hi;
        RS_RETURN_IF_ERROR(ParseClassAtom(&hi));
        if (lo.is_set || hi.is_set) {
          // Annex B: [\w-.] is \w, '-' and '.'.
          add(lo);
          set.emplace_back('-', '-');
          add(hi);
        } else if (lo.cp > hi.cp) {
          return Error(StatusCode::kInvalidArgument, lo_offset, "range out of order in character class");
        } else {
          set.emplace_back(lo.cp, hi.cp);
        }
      } else {
        add(lo);
      }
    }
    ++pos_;  // ']'
    internal::NormalizeRanges(&set);
    if (negated) set = internal::ComplementRanges(set);
    return MakeSet(std::move(set));
  }

  Status ParseClassAtom(Atom* a) {
    if (Peek() == '\\') return ParseEscape(/*in_class=*/true, a);
    uint32_t cp = 0;
    const size_t len = internal::DecodeUtf8(p_, pos_, &cp);
    if (len == 0) return Error(StatusCode::kInvalidArgument, pos_, "invalid UTF-8");
    pos_ += len;
    a->cp = cp;
    return Status::Ok();
  }

  // An escape at pos_ ('\'), inside or outside a class.
  Status ParseEscape(bool in_class, Atom* a) {
    const size_t start = pos_;
    ++pos_;  // '\'
    if (AtEnd()) return Error(StatusCode::kInvalidArgument, start, "\\ at end of pattern");
    const int c = Peek();
    ++pos_;
    const auto set = [&](char letter) {
      a->is_set = true;
      a->sets = internal::EcmaClassEscape(letter);
      return Status::Ok();
    };
    const auto cp = [&](uint32_t v) {
      a->cp = v;
      return Status::Ok();
    };
    if (c >= '1' && c <= '9') {
      return Error(StatusCode::kUnsupported, start,
                   std::string("backreference \\") + static_cast<char>(c) + " is not supported");
    }
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S': return set(static_cast<char>(c));
      case 'n': return cp('\n');
      case 't': return cp('\t');
      case 'r': return cp('\r');
      case 'f': return cp('\f');
      case 'v': return cp('\v');
      case 'b':
        if (in_class) return cp('\b');
        return Error(StatusCode::kUnsupported, start, "word boundary \\b is not supported");
      case 'B': return Error(StatusCode::kUnsupported, start, "word boundary \\B is not supported");
      case '0':
        if (Peek() >= '0' && Peek() <= '9') {
          return Error(StatusCode::kUnsupported, start,
                       "legacy octal escape \\0" + std::string(1, static_cast<char>(Peek())) + " is not supported");
        }
        return cp(0);
      case 'k': return Error(StatusCode::kUnsupported, start, "named backreference \\k is not supported");
      case 'p':
      case 'P':
        return Error(StatusCode::kUnsupported, start,
                     std::string("Unicode property escape \\") + static_cast<char>(c) + "{...} is not supported");
      case 'c': {
        const int l = Peek();
        if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z'))) {
          return Error(StatusCode::kInvalidArgument, start, "\\c must be followed by an ASCII letter");
        }
        ++pos_;
        return cp(static_cast<uint32_t>(l) % 32);
      }
      case 'x': {
        if (!IsHexDigit(static_cast<char>(Peek())) || !IsHexDigit(static_cast<char>(Peek(1)))) {
          return Error(StatusCode::kInvalidArgument, start, "\\x must be followed by two hex digits");
        }
        const uint32_t v = HexValue(p_[pos_]) * 16 + HexValue(p_[pos_ + 1]);
        pos_ += 2;
        return cp(v);
      }
      case 'u': {
        uint32_t v = 0;
        RS_RETURN_IF_ERROR(ParseUnicodeEscapeBody(start, &v));
        return cp(v);
      }
      case '-': return cp('-');
      default: break;
    }
    // Identity escapes: any punctuation or non-ASCII code point stands for itself. Unknown letter
    // and digit escapes are errors (they are in Unicode mode, and usually typos).
    --pos_;
    uint32_t v = 0;
    const size_t len = internal::DecodeUtf8(p_, pos_, &v);
    if (len == 0) return Error(StatusCode::kInvalidArgument, pos_, "invalid UTF-8");
    if (v < 0x80 && (IsAsciiAlnum(v) || v < 0x20)) {
      std::string shown = "\\";
      if (v >= 0x20) shown.push_back(static_cast<char>(v));
      return Error(StatusCode::kInvalidArgument, start, "unknown escape " + shown);
    }
    pos_ += len;
    return cp(v);
  }

  // After "\u": HHHH (a high surrogate followed by \uHHHH of a low one is joined) or {H...}.
  Status ParseUnicodeEscapeBody(size_t start, uint32_t* out) {
    if (Peek() == '{') {
      ++pos_;
      uint64_t v = 0;
      size_t digits = 0;
      while (!AtEnd() && IsHexDigit(p_[pos_])) {
        v = v * 16 + HexValue(p_[pos_]);
        if (v > kMaxCodepoint) return Error(StatusCode::kInvalidArgument, start, "\\u{...} past U+10FFFF");
        ++pos_, ++digits;
      }
      if (digits == 0 || Peek() != '}') return Error(StatusCode::kInvalidArgument, start, "malformed \\u{...} escape");
      ++pos_;
      *out = static_cast<uint32_t>(v);
      return Status::Ok();
    }
    const auto hex4 = [&](size_t at, uint32_t* v) {
      if (at + 4 > p_.size()) return false;
      *v = 0;
      for (size_t i = at; i < at + 4; ++i) {
        if (!IsHexDigit(p_[i])) return false;
        *v = *v * 16 + HexValue(p_[i]);
      }
      return true;
    };
    uint32_t v = 0;
    if (!hex4(pos_, &v)) return Error(StatusCode::kInvalidArgument, start, "\\u must be followed by four hex digits");
    pos_ += 4;
    uint32_t low = 0;
    if (v >= 0xD800 && v <= 0xDBFF && Peek() == '\\' && Peek(1) == 'u' && hex4(pos_ + 2, &low) && low >= 0xDC00 &&
        low <= 0xDFFF) {
      pos_ += 6;
      v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
    }
    *out = v;
    return Status::Ok();
  }

  std::string_view p_;
  size_t max_repeat_;
  size_t pos_ = 0;
};

// Writes a syntax tree into a GrammarBuilder. std::nullopt stands for "matches nothing" (an
// empty class and what it makes unmatchable); callers check b.status() for caps first.
class Emitter {
 public:
  Emitter(GrammarBuilder& b, RegexContext ctx) : b_(b), ctx_(ctx) {}

  // Each node is emitted once per mode and the result reused: EmitNonNull of a concatenation
  // needs both forms of its parts, which would otherwise double the work per nesting level.
  std::optional<Sequence> Emit(const Node& n) {
    if (n.kind == Node::kSet || n.kind == Node::kEmpty || n.is_anchor()) return EmitUncached(n);  // cheap
    auto it = emit_memo_.find(&n);
    if (it != emit_memo_.end()) return it->second;
    auto s = EmitUncached(n);
    emit_memo_.emplace(&n, s);
    return s;
  }

  // The language of `n` without the empty string; its emission is never nullable.
  std::optional<Sequence> EmitNonNull(const Node& n) {
    if (!n.nullable) return Emit(n);
    auto it = nonnull_memo_.find(&n);
    if (it != nonnull_memo_.end()) return it->second;
    auto s = EmitNonNullUncached(n);
    nonnull_memo_.emplace(&n, s);
    return s;
  }

  // `n` with the free text of a search before it (lead) and after it (trail), except where an
  // anchor on that edge says the match starts or ends there.
  std::optional<Sequence> EmitEdges(const Node& n, bool lead, bool trail) {
    const bool lead_inside = lead && n.start_anchor != kNoAnchor;
    const bool trail_inside = trail && n.end_anchor != kNoAnchor;
    if (!lead_inside && !trail_inside) {
      auto body = Emit(n);
      if (!body) return std::nullopt;
      Sequence out;
      if (lead) out.push_back(AnyText());
      out.insert(out.end(), body->begin(), body->end());
      if (trail) out.push_back(AnyText());
      return out;
    }
    if (!b_.CheckDeadline()) return Sequence{};
    switch (n.kind) {
      case Node::kAlt: {
        std::vector<Sequence> alts;
        for (const auto& k : n.kids) {
          if (auto s = EmitEdges(*k, lead, trail)) alts.push_back(std::move(*s));
        }
        return Choose(std::move(alts));
      }
      case Node::kConcat: {
        // Anchors on the edges cancel the free text on their side (the parser has made sure
        // nothing that matches text stands between them and the edge).
        size_t first = 0, last = n.kids.size();
        const auto drop = [&](const Node& k) { (k.kind == Node::kStart ? lead : trail) = false; };
        while (first < last && n.kids[first]->is_anchor()) drop(*n.kids[first++]);
        while (last > first && n.kids[last - 1]->is_anchor()) drop(*n.kids[--last]);
        if (first == last) return lead || trail ? Sequence{AnyText()} : Sequence{};
        if (last - first == 1) return EmitEdges(*n.kids[first], lead, trail);
        Sequence out;
        for (size_t i = first; i < last; ++i) {
          auto s = EmitEdges(*n.kids[i], lead && i == first, trail && i == last - 1);
          if (!s) return std::nullopt;
          out.insert(out.end(), s->begin(), s->end());
        }
        return out;
      }
      default: {
        // kStart / kEnd alone (a pattern or alternative that is just "^" or "$").
        if (n.kind == Node::kStart) lead = false;
        if (n.kind == Node::kEnd) trail = false;
        return lead || trail ? Sequence{AnyText()} : Sequence{};
      }
    }
  }

  // Any code point (newlines included), repeated: the free text around an unanchored search.
  Symbol AnyText() {
    if (!any_text_) {
      auto any = EmitSet({{0, kMaxCodepoint}});
      any_text_ = b_.Star(any ? *any : Sequence{}, "any");
    }
    return *any_text_;
  }

 private:
  std::optional<Sequence> EmitUncached(const Node& n) {
    if (!b_.status().ok()) return Sequence{};
    switch (n.kind) {
      case Node::kEmpty:
      case Node::kStart:  // anchors match no text; EmitEdges gives them their meaning
      case Node::kEnd: return Sequence{};
      case Node::kSet: return EmitSet(n.set);
      case Node::kConcat: {
        Sequence out;
        for (const auto& k : n.kids) {
          if (!b_.CheckDeadline()) return Sequence{};
          auto s = Emit(*k);
          if (!s) return std::nullopt;
          out.insert(out.end(), s->begin(), s->end());
        }
        return out;
      }
      case Node::kAlt: {
        std::vector<Sequence> alts;
        for (const auto& k : n.kids) {
          if (!b_.CheckDeadline()) return Sequence{};
          if (auto s = Emit(*k)) alts.push_back(std::move(*s));
        }
        return Choose(std::move(alts));
      }
      case Node::kRepeat: {
        const Node& body = *n.kids[0];
        if (n.max == 0) return Sequence{};
        if (body.nullable) {
          // X{m,n} = (X \ ε){0,n} when X matches the empty string.
          auto s = EmitNonNull(body);
          if (!s) return Sequence{};
          return Repeat(*s, 0, n.max);
        }
        auto s = Emit(body);
        if (!s) return n.min == 0 ? std::optional<Sequence>(Sequence{}) : std::nullopt;
        return Repeat(*s, n.min, n.max);
      }
    }
    return std::nullopt;
  }

  std::optional<Sequence> EmitNonNullUncached(const Node& n) {
    if (!b_.status().ok()) return Sequence{};
    switch (n.kind) {
      case Node::kEmpty:
      case Node::kStart:
      case Node::kEnd:
      case Node::kSet: return std::nullopt;
      case Node::kAlt: {
        std::vector<Sequence> alts;
        for (const auto& k : n.kids) {
          if (!b_.CheckDeadline()) return Sequence{};
          if (auto s = EmitNonNull(*k)) alts.push_back(std::move(*s));
        }
        return Choose(std::move(alts));
      }
      case Node::kRepeat: {
        const Node& body = *n.kids[0];
        if (n.max == 0) return std::nullopt;
        auto s = body.nullable ? EmitNonNull(body) : Emit(body);
        if (!s) return std::nullopt;
        return Repeat(*s, 1, n.max);
      }
      case Node::kConcat: {
        // Every part is nullable here. (X Y...) \ ε = (X \ ε) Y... | (Y...) \ ε, built from the
        // right with each suffix Y... emitted once as a rule, so the size stays linear.
        std::optional<Sequence> rest_nonnull;  // (kids[i+1..]) \ ε
        std::optional<Symbol> rest;            // kids[i+1..], as one rule
        for (size_t i = n.kids.size(); i-- > 0;) {
          if (!b_.CheckDeadline()) return Sequence{};
          const Node& k = *n.kids[i];
          std::vector<Sequence> alts;
          if (auto head = EmitNonNull(k)) {
            Sequence s = std::move(*head);
            if (rest) s.push_back(*rest);
            alts.push_back(std::move(s));
          }
          if (rest_nonnull) alts.push_back(std::move(*rest_nonnull));
          rest_nonnull = Choose(std::move(alts));
          if (i > 0) {
            auto whole = Emit(k);  // nullable, so never "nothing"
            Sequence s = whole ? std::move(*whole) : Sequence{};
            if (rest) s.push_back(*rest);
            rest = b_.Choice({std::move(s)}, "seq");
          }
        }
        return rest_nonnull;
      }
    }
    return std::nullopt;
  }

  std::optional<Sequence> Choose(std::vector<Sequence> alts) {
    if (alts.empty()) return std::nullopt;
    if (alts.size() == 1) return std::move(alts[0]);
    return Sequence{b_.Choice(std::move(alts), "alt")};
  }

  Sequence Repeat(const Sequence& body, int64_t min, int64_t max) {
    if (body.empty()) return {};
    if (min == 1 && max == 1) return body;
    return {b_.Repeat(body, min, max, "rep")};
  }

  std::optional<Sequence> EmitSet(const CpRanges& set) {
    const CpRanges usable = internal::WithoutSurrogates(set);
    if (usable.empty()) return std::nullopt;
    auto it = set_cache_.find(usable);
    if (it != set_cache_.end()) return it->second;
    Sequence out = ctx_ == RegexContext::kRaw ? internal::CodepointSetSymbols(b_, usable, "class") : JsonSet(usable);
    set_cache_.emplace(usable, out);
    return out;
  }

  // The JSON-text spellings (inside a string) of the code points of `set` (non-empty).
  Sequence JsonSet(const CpRanges& set) {
    std::vector<Sequence> alts;
    // Everything but the characters JSON requires escaped is written raw.
    CpRanges raw = internal::SubtractRange(set, 0x00, 0x1F);
    raw = internal::SubtractRange(raw, '"', '"');
    raw = internal::SubtractRange(raw, '\\', '\\');
    if (!raw.empty()) alts.push_back(internal::CodepointSetSymbols(b_, raw, "class"));

    // Escapes: \" \\ \/ \b \f \n \r \t, and \u00XX for the characters that must be escaped.
    ByteSet short_letters;
    const std::pair<uint32_t, char> kShort[] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'\b', 'b'},
                                                {'\f', 'f'}, {'\n', 'n'},  {'\r', 'r'}, {'\t', 't'}};
    for (const auto& [c, letter] : kShort) {
      if (internal::RangesContain(set, c)) short_letters.Add(static_cast<uint8_t>(letter));
    }
    std::vector<Sequence> after_u00;  // the last two hex digits of \u00XX
    for (uint32_t high = 0; high <= 1; ++high) {
      ByteSet low_digits;
      for (uint32_t low = 0; low < 16; ++low) {
        if (!internal::RangesContain(set, high * 16 + low)) continue;
        AddHexDigit(low, &low_digits);
      }
      if (!low_digits.Empty()) after_u00.push_back({b_.Byte(static_cast<uint8_t>('0' + high)), b_.Bytes(low_digits)});
    }
    if (internal::RangesContain(set, '"')) after_u00.push_back(b_.Literal("22"));
    if (internal::RangesContain(set, '\\')) {
      ByteSet c;
      AddHexDigit(0xC, &c);
      after_u00.push_back({b_.Byte('5'), b_.Bytes(c)});
    }
    std::vector<Sequence> after_backslash;
    if (!short_letters.Empty()) after_backslash.push_back({b_.Bytes(short_letters)});
    if (!after_u00.empty()) {
      Sequence s = b_.Literal("u00");
      auto tail = Choose(std::move(after_u00));
      s.insert(s.end(), tail->begin(), tail->end());
      after_backslash.push_back(std::move(s));
    }
    if (!after_backslash.empty()) {
      Sequence s = {b_.Byte('\\')};
      auto tail = Choose(std::move(after_backslash));
      s.insert(s.end(), tail->begin(), tail->end());
      alts.push_back(std::move(s));
    }
    return *Choose(std::move(alts));
  }

  static void AddHexDigit(uint32_t v, ByteSet* s) {
    if (v < 10) {
      s->Add(static_cast<uint8_t>('0' + v));
    } else {
      s->Add(static_cast<uint8_t>('a' + v - 10));
      s->Add(static_cast<uint8_t>('A' + v - 10));
    }
  }

  GrammarBuilder& b_;
  RegexContext ctx_;
  std::map<CpRanges, Sequence> set_cache_;
  std::unordered_map<const Node*, std::optional<Sequence>> emit_memo_;
  std::unordered_map<const Node*, std::optional<Sequence>> nonnull_memo_;
  std::optional<Symbol> any_text_;
};

}  // namespace

Result<Symbol> AddRegex(GrammarBuilder& b, std::string_view pattern, RegexContext ctx, bool search_semantics) {
  if (pattern.size() > b.limits().max_source_bytes) {
    return Status::ResourceExhausted("regex of " + std::to_string(pattern.size()) + " bytes is over the limit of " +
                                     std::to_string(b.limits().max_source_bytes));
  }
  Parser parser(pattern, b.limits().max_repeat);
  RS_ASSIGN_OR_RETURN(NodePtr root, parser.Parse());

  // The top-level alternatives become the alternatives of the top rule.
  std::vector<const Node*> alts;
  if (root->kind == Node::kAlt) {
    for (const auto& k : root->kids) alts.push_back(k.get());
  } else {
    alts.push_back(root.get());
  }
  Emitter emitter(b, ctx);
  std::vector<Sequence> top;
  for (const Node* alt : alts) {
    if (!b.CheckDeadline()) break;
    auto seq = emitter.EmitEdges(*alt, search_semantics, search_semantics);
    if (seq) top.push_back(std::move(*seq));  // else this alternative can never match
  }
  if (!b.status().ok()) return b.status();
  if (top.empty()) {
    return Status::InvalidArgument("regex \"" + internal::PrintableText(pattern, kMaxShownPattern) +
                                   "\" can never match (an empty class such as [] leaves nothing)");
  }
  // Declared last so that an error above leaves no undefined rule behind.
  const uint32_t rule = b.NewRule("regex");
  for (auto& seq : top) b.AddAlternative(rule, std::move(seq));
  if (!b.status().ok()) return b.status();
  return Symbol::Rule(rule);
}

Result<Grammar> CompileRegex(std::string_view pattern, const GrammarLimits& limits) {
  GrammarBuilder b(limits);
  RS_ASSIGN_OR_RETURN(Symbol top, AddRegex(b, pattern, RegexContext::kRaw, /*search_semantics=*/false));
  return b.Finish(top.index);
}

}  // namespace radixserve::grammar
