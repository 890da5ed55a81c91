#include "core/grammar/grammar.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace radixserve::grammar {

namespace {

void AppendByte(std::string* out, unsigned b) {
  if (b >= 0x21 && b < 0x7f && b != '\\' && b != ']' && b != '-' && b != '"' && b != '[' && b != '^') {
    out->push_back(static_cast<char>(b));
  } else {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02X", b);
    out->append(buf);
  }
}

std::string DumpByteSet(const ByteSet& s) {
  std::string out = "[";
  for (unsigned b = 0; b < 256;) {
    if (!s.Has(static_cast<uint8_t>(b))) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && s.Has(static_cast<uint8_t>(e + 1))) ++e;
    AppendByte(&out, b);
    if (e > b) {
      out.push_back('-');
      AppendByte(&out, e);
    }
    b = e + 1;
  }
  out.push_back(']');
  return out;
}

}  // namespace

std::string Grammar::Dump() const {
  std::string out;
  auto quoted = [&out](const std::string& text) {
    out.push_back('"');
    for (unsigned char c : text) {
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out.push_back(static_cast<char>(c));
      } else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02X", c);
        out.append(buf);
      }
    }
    out.push_back('"');
  };
  if (lazy()) {
    out += "# lazy: free text until ";
    quoted(trigger_);
    out += "\n";
  }
  if (!markup_texts_.empty()) {
    out += "# markup:";
    for (const std::string& m : markup_texts_) {
      out.push_back(' ');
      quoted(m);
    }
    out += "\n";
  }
  for (size_t r = 0; r < rules_.size(); ++r) {
    out += rules_[r].name;
    out += r == root_ ? " (root) ::=" : " ::=";
    for (size_t a = 0; a < rules_[r].alternatives.size(); ++a) {
      if (a > 0) out += " |";
      const Sequence& seq = rules_[r].alternatives[a];
      if (seq.empty()) out += " \"\"";
      for (const Symbol& s : seq) {
        out.push_back(' ');
        out += s.kind == Symbol::kRule ? rules_[s.index].name : DumpByteSet(byte_sets_[s.index]);
      }
    }
    out.push_back('\n');
  }
  return out;
}

GrammarBuilder::GrammarBuilder(GrammarLimits limits)
    : limits_(limits), deadline_(std::chrono::steady_clock::now() + limits.max_compile_time) {}

bool GrammarBuilder::CheckDeadline() {
  if (!status_.ok()) return false;
  if (std::chrono::steady_clock::now() > deadline_) {
    Fail(Status::ResourceExhausted("grammar compile ran past its time cap of " +
                                   std::to_string(limits_.max_compile_time.count()) + " ms"));
    return false;
  }
  return true;
}

void GrammarBuilder::AddMarkupText(std::string_view text) {
  if (text.empty()) return;
  for (const std::string& m : g_.markup_texts_)
    if (m == text) return;
  g_.markup_texts_.emplace_back(text);
}

uint32_t GrammarBuilder::NewRule(std::string_view name) {
  std::string n(name.empty() ? "r" : name);
  // Names only label rules for errors and dumps; a numeric suffix keeps them unique.
  n += "-" + std::to_string(g_.rules_.size());
  g_.rules_.push_back(Rule{std::move(n), {}});
  return static_cast<uint32_t>(g_.rules_.size() - 1);
}

void GrammarBuilder::AddAlternative(uint32_t rule, Sequence seq) {
  g_.symbol_count_ += seq.size() + 1;
  if (g_.symbol_count_ > limits_.max_symbols) {
    Fail(Status::ResourceExhausted("grammar has more than " + std::to_string(limits_.max_symbols) +
                                   " symbols (its size cap)"));
    return;
  }
  g_.rules_[rule].alternatives.push_back(std::move(seq));
}

uint32_t GrammarBuilder::InternByteSet(const ByteSet& set) {
  const uint64_t key = set.bits[0] * 0x9E3779B97F4A7C15ull ^ set.bits[1] * 0xC2B2AE3D27D4EB4Full ^
                       set.bits[2] * 0x165667B19E3779F9ull ^ set.bits[3];
  auto [it, inserted] = set_index_.try_emplace(key);
  for (uint32_t i : it->second)
    if (g_.byte_sets_[i] == set) return i;
  g_.byte_sets_.push_back(set);
  it->second.push_back(static_cast<uint32_t>(g_.byte_sets_.size() - 1));
  return it->second.back();
}

Sequence GrammarBuilder::Literal(std::string_view bytes) {
  Sequence seq;
  seq.reserve(bytes.size());
  for (char c : bytes) seq.push_back(Byte(static_cast<uint8_t>(c)));
  return seq;
}

namespace {

// Byte-range sequences spelling every code point in [lo, hi] in UTF-8 of `len` bytes.
// `level` counts the bytes still to emit; the first is the lead byte.
void Utf8Sequences(uint32_t lo, uint32_t hi, int len, int level, std::vector<std::pair<uint8_t, uint8_t>>* prefix,
                   std::vector<std::vector<std::pair<uint8_t, uint8_t>>>* out) {
  static constexpr uint8_t kLead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
  const int shift = 6 * (level - 1);
  auto byte_of = [&](uint32_t top) -> uint8_t {
    return static_cast<uint8_t>(level == len ? (kLead[len] | top) : (0x80 | top));
  };
  if (level == 1) {
    prefix->push_back({byte_of(lo), byte_of(hi)});
    out->push_back(*prefix);
    prefix->pop_back();
    return;
  }
  const uint32_t mask = (uint32_t{1} << shift) - 1;
  uint32_t lo_top = lo >> shift, hi_top = hi >> shift;
  if (lo_top == hi_top) {
    prefix->push_back({byte_of(lo_top), byte_of(lo_top)});
    Utf8Sequences(lo & mask, hi & mask, len, level - 1, prefix, out);
    prefix->pop_back();
    return;
  }
  if ((lo & mask) != 0) {
    prefix->push_back({byte_of(lo_top), byte_of(lo_top)});
    Utf8Sequences(lo & mask, mask, len, level - 1, prefix, out);
    prefix->pop_back();
    ++lo_top;
  }
  bool tail = (hi & mask) != mask;
  if (tail) --hi_top;
  if (lo_top <= hi_top) {
    prefix->push_back({byte_of(lo_top), byte_of(hi_top)});
    Utf8Sequences(0, mask, len, level - 1, prefix, out);
    prefix->pop_back();
  }
  if (tail) {
    ++hi_top;
    prefix->push_back({byte_of(hi_top), byte_of(hi_top)});
    Utf8Sequences(0, hi & mask, len, level - 1, prefix, out);
    prefix->pop_back();
  }
}

}  // namespace

Symbol GrammarBuilder::CodepointRanges(std::vector<std::pair<uint32_t, uint32_t>> ranges, std::string_view name) {
  // Normalise: clip to Unicode, drop surrogates, sort and merge.
  std::vector<std::pair<uint32_t, uint32_t>> in;
  for (auto [lo, hi] : ranges) {
    if (lo > hi) continue;
    hi = std::min<uint32_t>(hi, 0x10FFFF);
    if (lo > hi) continue;
    if (lo < 0xD800 && hi >= 0xD800) {
      in.push_back({lo, std::min<uint32_t>(hi, 0xD7FF)});
      if (hi > 0xDFFF) in.push_back({0xE000, hi});
    } else if (lo >= 0xD800 && lo <= 0xDFFF) {
      if (hi > 0xDFFF) in.push_back({0xE000, hi});
    } else {
      in.push_back({lo, hi});
    }
  }
  std::sort(in.begin(), in.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (auto r : in) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  static constexpr uint32_t kMax[5] = {0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  std::vector<std::vector<std::pair<uint8_t, uint8_t>>> seqs;
  std::vector<std::pair<uint8_t, uint8_t>> prefix;
  for (auto [lo, hi] : merged) {
    for (int len = 1; len <= 4; ++len) {
      const uint32_t base = len == 1 ? 0 : kMax[len - 1] + 1;
      const uint32_t a = std::max(lo, base), b = std::min(hi, kMax[len]);
      if (a <= b) Utf8Sequences(a, b, len, len, &prefix, &seqs);
    }
  }
  // One-byte sequences merge into a single byte set (ASCII classes become one symbol).
  const uint32_t rule = NewRule(name);
  ByteSet single;
  for (const auto& s : seqs)
    if (s.size() == 1) single.AddRange(s[0].first, s[0].second);
  if (!single.Empty()) AddAlternative(rule, {Bytes(single)});
  for (const auto& s : seqs) {
    if (s.size() == 1) continue;
    Sequence seq;
    for (auto [a, b] : s) seq.push_back(Bytes(ByteSet::Range(a, b)));
    AddAlternative(rule, std::move(seq));
  }
  return Symbol::Rule(rule);
}

Symbol GrammarBuilder::Choice(std::vector<Sequence> alternatives, std::string_view name) {
  const uint32_t rule = NewRule(name);
  for (auto& a : alternatives) AddAlternative(rule, std::move(a));
  return Symbol::Rule(rule);
}

Symbol GrammarBuilder::Empty() {
  const uint32_t rule = NewRule("empty");
  AddAlternative(rule, {});
  return Symbol::Rule(rule);
}

Symbol GrammarBuilder::Embed(const Grammar& g) {
  std::vector<uint32_t> set_of(g.byte_sets().size());
  for (size_t i = 0; i < set_of.size(); ++i) set_of[i] = InternByteSet(g.byte_sets()[i]);
  // Declared first: alternatives refer to rules of g declared after them.
  std::vector<uint32_t> rule_of(g.rules().size());
  for (size_t r = 0; r < rule_of.size(); ++r) {
    std::string_view name = g.rules()[r].name;
    name = name.substr(0, name.rfind('-'));  // NewRule adds a fresh numeric suffix
    rule_of[r] = NewRule(name);
  }
  for (size_t r = 0; r < rule_of.size() && status_.ok(); ++r)
    for (const Sequence& seq : g.rules()[r].alternatives) {
      Sequence copy(seq);
      for (Symbol& s : copy) s.index = s.kind == Symbol::kRule ? rule_of[s.index] : set_of[s.index];
      AddAlternative(rule_of[r], std::move(copy));
    }
  if (rule_of.empty()) return Empty();
  return Symbol::Rule(rule_of[g.root()]);
}

Symbol GrammarBuilder::Repeat(const Sequence& seq_in, int64_t min, int64_t max, std::string_view name) {
  if (min < 0) min = 0;
  if ((max >= 0 && max < min) || (max >= 0 && static_cast<uint64_t>(max) > limits_.max_repeat) ||
      static_cast<uint64_t>(min) > limits_.max_repeat) {
    if (max >= 0 && max < min) {
      Fail(Status::InvalidArgument("repetition {" + std::to_string(min) + "," + std::to_string(max) +
                                   "} has its maximum below its minimum"));
    } else {
      Fail(Status::ResourceExhausted("repetition bound " + std::to_string(std::max(min, max)) +
                                     " is over the cap of " + std::to_string(limits_.max_repeat)));
    }
    return Empty();
  }
  // Repeat one symbol: a longer sequence becomes a rule of its own.
  Symbol item = seq_in.size() == 1 ? seq_in[0] : Choice({seq_in}, name);
  const uint32_t rule = NewRule(name);
  Sequence head(static_cast<size_t>(min), item);
  if (max < 0) {
    // tail ::= item tail | "" (right recursion: the matcher's tail calls keep its stack flat).
    const uint32_t tail = NewRule(std::string(name) + "-star");
    AddAlternative(tail, {item, Symbol::Rule(tail)});
    AddAlternative(tail, {});
    head.push_back(Symbol::Rule(tail));
    AddAlternative(rule, std::move(head));
    return Symbol::Rule(rule);
  }
  // Up to k more: opt_k ::= item opt_{k-1} | "" (linear in k, no copies of the item), shared
  // by every repetition of the item.
  const int64_t extra = max - min;
  std::vector<Symbol>& chain = up_to_chains_[(uint64_t{item.kind} << 32) | item.index];
  for (int64_t k = static_cast<int64_t>(chain.size()) + 1; k <= extra; ++k) {
    if ((k & 1023) == 0 && !CheckDeadline()) return Empty();
    const uint32_t opt = NewRule(std::string(name) + "-opt");
    if (k > 1) {
      AddAlternative(opt, {item, chain.back()});
    } else {
      AddAlternative(opt, {item});
    }
    AddAlternative(opt, {});
    chain.push_back(Symbol::Rule(opt));
  }
  if (extra > 0) head.push_back(chain[extra - 1]);
  AddAlternative(rule, std::move(head));
  return Symbol::Rule(rule);
}

Result<Grammar> GrammarBuilder::Finish(uint32_t root) {
  if (!status_.ok()) return status_;
  const size_t n = g_.rules_.size();
  if (root >= n) return Status::Internal("grammar root rule out of range");
  // Reachable rules from the root, in discovery order.
  std::vector<int64_t> new_index(n, -1);
  std::vector<uint32_t> order{root};
  new_index[root] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Sequence& seq : g_.rules_[order[i]].alternatives)
      for (const Symbol& s : seq)
        if (s.kind == Symbol::kRule && new_index[s.index] < 0) {
          new_index[s.index] = static_cast<int64_t>(order.size());
          order.push_back(s.index);
        }
  }
  for (uint32_t r : order)
    if (g_.rules_[r].alternatives.empty())
      return Status::InvalidArgument("rule " + g_.rules_[r].name + " matches nothing (it has no alternative)");
  Grammar out;
  out.trigger_ = std::move(g_.trigger_);
  out.markup_texts_ = std::move(g_.markup_texts_);
  out.byte_sets_ = std::move(g_.byte_sets_);
  out.rules_.reserve(order.size());
  for (uint32_t r : order) {
    Rule rule = std::move(g_.rules_[r]);
    for (Sequence& seq : rule.alternatives)
      for (Symbol& s : seq) {
        if (s.kind == Symbol::kRule) s.index = static_cast<uint32_t>(new_index[s.index]);
        ++out.symbol_count_;
      }
    out.rules_.push_back(std::move(rule));
  }
  out.root_ = 0;
  // Nullable rules (fixpoint), then left recursion: an edge R -> S where S can start R.
  const size_t m = out.rules_.size();
  std::vector<char> nullable(m, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < m; ++r) {
      if (nullable[r]) continue;
      for (const Sequence& seq : out.rules_[r].alternatives) {
        bool all = true;
        for (const Symbol& s : seq)
          if (s.kind == Symbol::kBytes || !nullable[s.index]) {
            all = false;
            break;
          }
        if (all) {
          nullable[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  std::vector<std::vector<uint32_t>> starts(m);
  for (size_t r = 0; r < m; ++r)
    for (const Sequence& seq : out.rules_[r].alternatives)
      for (const Symbol& s : seq) {
        if (s.kind == Symbol::kBytes) break;
        starts[r].push_back(s.index);
        if (!nullable[s.index]) break;
      }
  // Iterative DFS cycle check (grammars can be deep; no recursion on the C++ stack).
  std::vector<uint8_t> color(m, 0);  // 0 new, 1 on stack, 2 done
  for (size_t s0 = 0; s0 < m; ++s0) {
    if (color[s0]) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{static_cast<uint32_t>(s0), 0}};
    color[s0] = 1;
    while (!stack.empty()) {
      auto& [r, i] = stack.back();
      if (i < starts[r].size()) {
        const uint32_t next = starts[r][i++];
        if (color[next] == 1)
          return Status::InvalidArgument("rule " + out.rules_[next].name +
                                         " is left recursive (it can start with itself), which is not supported");
        if (color[next] == 0) {
          color[next] = 1;
          stack.push_back({next, 0});
        }
      } else {
        color[r] = 2;
        stack.pop_back();
      }
    }
  }
  return out;
}

}  // namespace radixserve::grammar
