// GBNF front-end (see gbnf.h). The text is first parsed into a small syntax tree per rule, then
// emitted into a GrammarBuilder. Parsing the whole text before emitting lets a later definition
// of a rule replace an earlier one (as in llama.cpp) and lets an undefined reference be reported
// with the line where it is used.
#include "core/grammar/gbnf.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/grammar/codepoint_util.h"

namespace radixserve::grammar {
namespace {

using internal::CpRanges;
using internal::kMaxCodepoint;

// Groups nested deeper than this are refused: parsing and emitting recurse once per level.
constexpr int kMaxGroupNesting = 256;

struct Alternatives;

// One element of a sequence and the quantifiers that follow it, applied in order.
struct Item {
  enum Kind : uint8_t { kLiteral, kClass, kAny, kRef, kGroup };
  Kind kind = kLiteral;
  std::string literal;                                   // kLiteral: UTF-8 bytes (may be empty)
  CpRanges ranges;                                       // kClass: normalized, negation applied
  std::string name;                                      // kRef
  size_t offset = 0;                                     // where the element starts (for errors)
  std::unique_ptr<Alternatives> group;                   // kGroup
  std::vector<std::pair<int64_t, int64_t>> quantifiers;  // {min, max}; max < 0 = unbounded
};

struct Alternatives {
  std::vector<std::vector<Item>> seqs;
};

struct RuleDef {
  std::string name;
  size_t offset = 0;
  Alternatives body;
};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class GbnfParser {
 public:
  GbnfParser(std::string_view text, const GrammarLimits& limits) : t_(text), limits_(limits) {}

  // Parses every rule; a later definition of a name replaces the earlier one.
  Status Parse(std::vector<RuleDef>* rules) {
    SkipSpace(true);
    while (!AtEnd()) {
      RuleDef def;
      RS_RETURN_IF_ERROR(ParseRule(&def));
      auto [it, inserted] = index_.try_emplace(def.name, rules->size());
      if (inserted) {
        rules->push_back(std::move(def));
      } else {
        (*rules)[it->second] = std::move(def);
      }
    }
    return Status::Ok();
  }

  // "gbnf line L, column C: what".
  Status Error(StatusCode code, size_t offset, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < t_.size(); ++i) {
      if (t_[i] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<uint8_t>(t_[i]) & 0xC0) != 0x80) {
        ++col;  // count code points, not bytes
      }
    }
    return Status(code, "gbnf line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

 private:
  bool AtEnd() const { return pos_ >= t_.size(); }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < t_.size() ? t_[pos_ + ahead] : '\0'; }
  bool Has(size_t ahead = 0) const { return pos_ + ahead < t_.size(); }

  // Skips blanks and comments, and newlines when `newline_ok`.
  void SkipSpace(bool newline_ok) {
    while (!AtEnd()) {
      const char c = t_[pos_];
      if (c == ' ' || c == '\t' || (newline_ok && (c == '\r' || c == '\n'))) {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && t_[pos_] != '\r' && t_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string ParseName() {
    const size_t start = pos_;
    while (!AtEnd() && IsWordChar(t_[pos_])) ++pos_;
    return std::string(t_.substr(start, pos_ - start));
  }

  Status ParseRule(RuleDef* def) {
    def->offset = pos_;
    def->name = ParseName();
    if (def->name.empty()) return Error(StatusCode::kInvalidArgument, pos_, "expecting a rule name" + Showing());
    SkipSpace(false);
    if (t_.substr(pos_, 3) != "::=") {
      return Error(StatusCode::kInvalidArgument, pos_, "expecting ::= after rule name '" + def->name + "'" + Showing());
    }
    pos_ += 3;
    SkipSpace(true);
    RS_RETURN_IF_ERROR(ParseAlternatives(def->name, /*nested=*/false, 0, &def->body));
    if (Peek() == '\r') {
      pos_ += Peek(1) == '\n' ? 2 : 1;
    } else if (Peek() == '\n') {
      ++pos_;
    } else if (!AtEnd()) {
      return Error(StatusCode::kInvalidArgument, pos_,
                   "expecting the end of rule '" + def->name + "' (a newline)" + Showing());
    }
    SkipSpace(true);
    return Status::Ok();
  }

  // " at 'xyz'": the text at pos_, for errors.
  std::string Showing() const {
    if (AtEnd()) return " at the end of the text";
    std::string_view rest = t_.substr(pos_);
    rest = rest.substr(0, rest.find_first_of("\r\n"));
    return " at '" + internal::PrintableText(rest, 16) + "'";
  }

  Status ParseAlternatives(const std::string& rule, bool nested, int depth, Alternatives* out) {
    while (true) {
      out->seqs.emplace_back();
      RS_RETURN_IF_ERROR(ParseSequence(rule, nested, depth, &out->seqs.back()));
      if (Peek() != '|' || AtEnd()) return Status::Ok();
      ++pos_;
      SkipSpace(true);
    }
  }

  Status ParseSequence(const std::string& rule, bool nested, int depth, std::vector<Item>* seq) {
    while (!AtEnd()) {
      const size_t start = pos_;
      const char c = Peek();
      if (c == '"') {
        Item item;
        item.kind = Item::kLiteral;
        item.offset = start;
        ++pos_;
        while (true) {
          if (AtEnd()) {
            return Error(StatusCode::kInvalidArgument, start, "unterminated string literal in rule '" + rule + "'");
          }
          if (Peek() == '"') break;
          uint32_t cp = 0;
          RS_RETURN_IF_ERROR(ParseChar(&cp));
          if (cp >= 0xD800 && cp <= 0xDFFF) {
            return Error(StatusCode::kInvalidArgument, start, "a surrogate code point cannot appear in UTF-8 text");
          }
          internal::AppendUtf8(cp, &item.literal);
        }
        ++pos_;
        seq->push_back(std::move(item));
      } else if (c == '[') {
        Item item;
        item.kind = Item::kClass;
        item.offset = start;
        RS_RETURN_IF_ERROR(ParseClass(rule, &item.ranges));
        seq->push_back(std::move(item));
      } else if (c == '<' || c == '!') {
        return Error(StatusCode::kUnsupported, start,
                     "token references (<...>, <[id]>, !<...>) match vocabulary tokens and are not supported");
      } else if (IsWordChar(c)) {
        Item item;
        item.kind = Item::kRef;
        item.offset = start;
        item.name = ParseName();
        seq->push_back(std::move(item));
      } else if (c == '(') {
        if (depth + 1 > kMaxGroupNesting) {
          return Error(StatusCode::kUnsupported, start, "groups nested deeper than " + std::to_string(kMaxGroupNesting));
        }
        ++pos_;
        SkipSpace(true);
        Item item;
        item.kind = Item::kGroup;
        item.offset = start;
        item.group = std::make_unique<Alternatives>();
        RS_RETURN_IF_ERROR(ParseAlternatives(rule, /*nested=*/true, depth + 1, item.group.get()));
        if (Peek() != ')' || AtEnd()) {
          return Error(StatusCode::kInvalidArgument, pos_,
                       "expecting ')' to close the group opened at " + LineCol(start) + Showing());
        }
        ++pos_;
        seq->push_back(std::move(item));
      } else if (c == '.') {
        Item item;
        item.kind = Item::kAny;
        item.offset = start;
        ++pos_;
        seq->push_back(std::move(item));
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (seq->empty()) {
          return Error(StatusCode::kInvalidArgument, start,
                       std::string("expecting an item before the quantifier '") + c + "'");
        }
        int64_t min, max;
        if (c == '{') {
          RS_RETURN_IF_ERROR(ParseBraces(nested, &min, &max));
        } else {
          ++pos_;
          min = c == '+' ? 1 : 0;
          max = c == '?' ? 1 : -1;
        }
        seq->back().quantifiers.emplace_back(min, max);
      } else {
        break;
      }
      SkipSpace(nested);
    }
    return Status::Ok();
  }

  // {n} {n,} {n,m} at pos_, blanks allowed inside as llama.cpp allows them.
  Status ParseBraces(bool nested, int64_t* min, int64_t* max) {
    const size_t start = pos_;
    ++pos_;  // '{'
    SkipSpace(nested);
    const auto number = [&](int64_t* v) -> Status {
      if (!IsDigit(Peek()) || AtEnd()) {
        return Error(StatusCode::kInvalidArgument, pos_, "expecting an integer" + Showing());
      }
      *v = 0;
      while (!AtEnd() && IsDigit(Peek())) {
        if (*v < (int64_t{1} << 40)) *v = *v * 10 + (Peek() - '0');  // saturate; refused below
        ++pos_;
      }
      SkipSpace(nested);
      return Status::Ok();
    };
    RS_RETURN_IF_ERROR(number(min));
    if (Peek() == '}' && !AtEnd()) {
      *max = *min;
    } else if (Peek() == ',' && !AtEnd()) {
      ++pos_;
      SkipSpace(nested);
      *max = -1;
      if (IsDigit(Peek()) && !AtEnd()) RS_RETURN_IF_ERROR(number(max));
      if (Peek() != '}' || AtEnd()) return Error(StatusCode::kInvalidArgument, pos_, "expecting '}'" + Showing());
    } else {
      return Error(StatusCode::kInvalidArgument, pos_, "expecting ',' or '}' in a {n,m} quantifier" + Showing());
    }
    ++pos_;  // '}'
    if (*max >= 0 && *min > *max) {
      return Error(StatusCode::kInvalidArgument, start, "numbers out of order in a {n,m} quantifier");
    }
    const auto over = [&](int64_t v) { return v > static_cast<int64_t>(limits_.max_repeat); };
    if (over(*min) || over(*max)) {
      return Error(StatusCode::kResourceExhausted, start,
                   "repetition " + std::string(t_.substr(start, pos_ - start)) + " is over the limit of " +
                       std::to_string(limits_.max_repeat));
    }
    return Status::Ok();
  }

  // [...] or [^...] at pos_, into normalized ranges with the negation applied.
  Status ParseClass(const std::string& rule, CpRanges* out) {
    const size_t start = pos_;
    ++pos_;  // '['
    bool negated = false;
    if (Peek() == '^' && !AtEnd()) {
      negated = true;
      ++pos_;
    }
    CpRanges set;
    while (true) {
      if (AtEnd()) {
        return Error(StatusCode::kInvalidArgument, start, "unterminated character class in rule '" + rule + "'");
      }
      if (Peek() == ']') break;
      const size_t lo_offset = pos_;
      uint32_t lo = 0;
      RS_RETURN_IF_ERROR(ParseChar(&lo));
      uint32_t hi = lo;
      if (Peek() == '-' && Has(1) && Peek(1) != ']') {
        ++pos_;
        RS_RETURN_IF_ERROR(ParseChar(&hi));
        if (hi < lo) return Error(StatusCode::kInvalidArgument, lo_offset, "character range out of order");
      }
      set.emplace_back(lo, hi);
    }
    ++pos_;  // ']'
    if (set.empty()) {
      return Error(StatusCode::kInvalidArgument, start, "empty character class [] or [^] is not supported");
    }
    internal::NormalizeRanges(&set);
    if (negated) set = internal::ComplementRanges(set);
    if (internal::WithoutSurrogates(set).empty()) {
      return Error(StatusCode::kInvalidArgument, start, "character class matches no code point");
    }
    *out = std::move(set);
    return Status::Ok();
  }

  // One character of a literal or class, escapes decoded.
  Status ParseChar(uint32_t* cp) {
    const size_t start = pos_;
    if (Peek() != '\\') {
      const size_t len = internal::DecodeUtf8(t_, pos_, cp);
      if (len == 0) return Error(StatusCode::kInvalidArgument, start, "invalid UTF-8");
      pos_ += len;
      return Status::Ok();
    }
    if (!Has(1)) return Error(StatusCode::kInvalidArgument, start, "\\ at the end of the text");
    const char e = Peek(1);
    pos_ += 2;
    const auto hex = [&](int digits) -> Status {
      uint32_t v = 0;
      for (int i = 0; i < digits; ++i) {
        const char h = Peek();
        int d;
        if (AtEnd()) {
          d = -1;
        } else if (h >= '0' && h <= '9') {
          d = h - '0';
        } else if (h >= 'a' && h <= 'f') {
          d = h - 'a' + 10;
        } else if (h >= 'A' && h <= 'F') {
          d = h - 'A' + 10;
        } else {
          d = -1;
        }
        if (d < 0) {
          return Error(StatusCode::kInvalidArgument, start,
                       "expecting " + std::to_string(digits) + " hex digits after \\" + std::string(1, e));
        }
        v = v * 16 + static_cast<uint32_t>(d);
        ++pos_;
      }
      if (v > kMaxCodepoint) return Error(StatusCode::kInvalidArgument, start, "code point past U+10FFFF");
      *cp = v;
      return Status::Ok();
    };
    switch (e) {
      case 'x': return hex(2);
      case 'u': return hex(4);
      case 'U': return hex(8);
      case 't': *cp = '\t'; return Status::Ok();
      case 'r': *cp = '\r'; return Status::Ok();
      case 'n': *cp = '\n'; return Status::Ok();
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-': *cp = static_cast<uint8_t>(e); return Status::Ok();
      default: {
        std::string shown = "\\";
        if (static_cast<uint8_t>(e) >= 0x20 && static_cast<uint8_t>(e) < 0x7F) shown.push_back(e);
        return Error(StatusCode::kInvalidArgument, start, "unknown escape " + shown);
      }
    }
  }

  std::string LineCol(size_t offset) const {
    std::string m = Error(StatusCode::kInvalidArgument, offset, "").message();
    // "gbnf line L, column C: " -> "line L, column C"
    m = m.substr(5);
    return m.substr(0, m.size() - 2);
  }

  std::string_view t_;
  const GrammarLimits& limits_;
  size_t pos_ = 0;
  std::map<std::string, size_t> index_;  // rule name -> its place in Parse's output
};

// Writes the parsed rules into a GrammarBuilder.
class GbnfEmitter {
 public:
  GbnfEmitter(GrammarBuilder& b, const std::map<std::string, uint32_t>& rule_ids) : b_(b), ids_(rule_ids) {}

  void EmitRule(uint32_t id, const RuleDef& def) {
    for (const auto& seq : def.body.seqs) {
      if (!b_.CheckDeadline()) return;
      b_.AddAlternative(id, EmitSequence(def.name, seq));
    }
  }

 private:
  Sequence EmitSequence(const std::string& rule, const std::vector<Item>& items) {
    Sequence out;
    for (const auto& item : items) {
      if (!b_.CheckDeadline()) return out;
      Sequence s = EmitItem(rule, item);
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

  Sequence EmitItem(const std::string& rule, const Item& item) {
    Sequence s;
    switch (item.kind) {
      case Item::kLiteral: s = b_.Literal(item.literal); break;
      case Item::kClass: s = internal::CodepointSetSymbols(b_, item.ranges, rule + "-class"); break;
      case Item::kAny:
        if (!any_) any_ = internal::CodepointSetSymbols(b_, {{0, kMaxCodepoint}}, "any");
        s = *any_;
        break;
      case Item::kRef: s = {Symbol::Rule(ids_.at(item.name))}; break;
      case Item::kGroup: {
        const auto& seqs = item.group->seqs;
        if (seqs.size() == 1) {
          s = EmitSequence(rule, seqs[0]);
        } else {
          std::vector<Sequence> alts;
          for (const auto& seq : seqs) alts.push_back(EmitSequence(rule, seq));
          s = {b_.Choice(std::move(alts), rule + "-group")};
        }
        break;
      }
    }
    for (const auto& [min, max] : item.quantifiers) {
      if (s.empty() || (min == 1 && max == 1)) continue;  // repeating nothing is nothing
      if (max == 0) {
        s.clear();
        continue;
      }
      s = {b_.Repeat(s, min, max, rule + "-rep")};
    }
    return s;
  }

  GrammarBuilder& b_;
  const std::map<std::string, uint32_t>& ids_;
  std::optional<Sequence> any_;
};

// The first reference (in text order) to a rule that is not defined.
const Item* FindUndefined(const Alternatives& alts, const std::map<std::string, uint32_t>& ids) {
  for (const auto& seq : alts.seqs) {
    for (const auto& item : seq) {
      if (item.kind == Item::kRef && ids.count(item.name) == 0) return &item;
      if (item.kind == Item::kGroup) {
        if (const Item* u = FindUndefined(*item.group, ids)) return u;
      }
    }
  }
  return nullptr;
}

}  // namespace

Result<Grammar> CompileGbnf(std::string_view text, const GrammarLimits& limits) {
  if (text.size() > limits.max_source_bytes) {
    return Status::ResourceExhausted("GBNF grammar of " + std::to_string(text.size()) + " bytes is over the limit of " +
                                     std::to_string(limits.max_source_bytes));
  }
  GbnfParser parser(text, limits);
  std::vector<RuleDef> rules;
  RS_RETURN_IF_ERROR(parser.Parse(&rules));

  GrammarBuilder b(limits);
  // Every user rule is declared before any helper rule, so user names keep their spelling.
  std::map<std::string, uint32_t> ids;
  for (const auto& def : rules) ids[def.name] = b.NewRule(def.name);

  // Undefined references, reported at the earliest use in the text.
  const Item* first_undefined = nullptr;
  for (const auto& def : rules) {
    const Item* u = FindUndefined(def.body, ids);
    if (u != nullptr && (first_undefined == nullptr || u->offset < first_undefined->offset)) first_undefined = u;
  }
  if (first_undefined != nullptr) {
    return parser.Error(StatusCode::kInvalidArgument, first_undefined->offset,
                        "undefined rule '" + first_undefined->name + "'");
  }
  auto root = ids.find("root");
  if (root == ids.end()) return Status::InvalidArgument("GBNF grammar has no rule named 'root'");

  GbnfEmitter emitter(b, ids);
  for (const auto& def : rules) {
    if (!b.CheckDeadline()) break;
    emitter.EmitRule(ids[def.name], def);
  }
  if (!b.status().ok()) return b.status();
  return b.Finish(root->second);
}

}  // namespace radixserve::grammar
