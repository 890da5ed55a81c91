// CharDfa (see char_dfa.h): construction from strings and lengths, products, complement,
// trimming and minimization, and the JSON-string emitter. The regex reader is in
// char_dfa_regex.cc.
#include "core/grammar/char_dfa.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>

namespace radixserve::grammar::internal {

namespace {

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



}  // namespace

std::vector<CharDfa::Edge> UniverseEdges(uint32_t to) {
  return {{0, 0xD7FF, to}, {0xE000, kMaxCodepoint, to}};
}

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


CharDfa CharDfa::FromStates(std::vector<State> states) {
  CharDfa d;
  d.states_ = std::move(states);
  if (d.states_.empty()) d.states_.resize(1);
  d.Normalize();
  return d;
}

// Hopcroft's algorithm. The alphabet is the elementary code-point intervals between edge bounds,
// compressed to the classes of intervals every state treats alike (a pattern's class of 600
// ranges is one letter); missing edges go to a sink. Writes each live state's class to *cls
// (indexed like states_) and the number of classes to *count.
void CharDfa::Minimize(const std::vector<uint32_t>& keep, const std::vector<char>& live, std::vector<uint32_t>* cls,
                       size_t* count) const {
  const size_t n = states_.size();
  const uint32_t m = static_cast<uint32_t>(keep.size());
  const uint32_t sink = m, total = m + 1;
  std::vector<uint32_t> idx(n, UINT32_MAX);
  for (uint32_t i = 0; i < m; ++i) idx[keep[i]] = i;
  std::vector<uint32_t> points{0, kMaxCodepoint + 1};
  for (uint32_t s : keep)
    for (const auto& e : states_[s].edges)
      if (live[e.to]) points.push_back(e.lo), points.push_back(e.hi + 1);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  const size_t k = points.size() - 1;
  if (k * total > (size_t{1} << 23)) {
    *count = 0;
    return;
  }
  // delta[c * total + s]: the target of state s on raw interval c.
  std::vector<uint32_t> delta(k * total, sink);
  for (uint32_t i = 0; i < m; ++i) {
    for (const auto& e : states_[keep[i]].edges) {
      if (!live[e.to]) continue;
      size_t c = static_cast<size_t>(std::lower_bound(points.begin(), points.end(), e.lo) - points.begin());
      for (; c < k && points[c] <= e.hi; ++c) delta[c * total + i] = idx[e.to];
    }
  }
  // Compress the alphabet: intervals with the same column of targets are one letter.
  std::unordered_map<std::vector<uint32_t>, uint32_t, StateSetHash> column_ids;
  std::vector<uint32_t> letters;  // raw interval of each letter
  for (size_t c = 0; c < k; ++c) {
    std::vector<uint32_t> column(delta.begin() + static_cast<ptrdiff_t>(c * total),
                                 delta.begin() + static_cast<ptrdiff_t>((c + 1) * total));
    auto [it, inserted] = column_ids.emplace(std::move(column), static_cast<uint32_t>(letters.size()));
    if (inserted) letters.push_back(static_cast<uint32_t>(c));
  }
  const size_t a = letters.size();
  // Predecessors per letter and target: pred[l][offset[l][t] .. offset[l][t+1]).
  std::vector<std::vector<uint32_t>> offset(a, std::vector<uint32_t>(total + 1, 0)), pred(a);
  for (size_t l = 0; l < a; ++l) {
    const uint32_t* col = &delta[letters[l] * total];
    std::vector<uint32_t>& off = offset[l];
    for (uint32_t s = 0; s < total; ++s) ++off[(s == sink ? sink : col[s]) + 1];
    for (uint32_t t = 0; t < total; ++t) off[t + 1] += off[t];
    pred[l].resize(total);
    std::vector<uint32_t> fill(off.begin(), off.end() - 1);
    for (uint32_t s = 0; s < total; ++s) pred[l][fill[s == sink ? sink : col[s]]++] = s;
  }
  // Refinable partition: states ordered by block; a block is [start, end) with `marked` of its
  // states moved to its front.
  struct Block {
    uint32_t start, end, marked;
  };
  std::vector<uint32_t> elems, pos(total), block(total);
  std::vector<Block> blocks;
  for (int accepting = 1; accepting >= 0; --accepting) {
    const uint32_t start = static_cast<uint32_t>(elems.size());
    for (uint32_t i = 0; i < total; ++i) {
      const bool acc = i != sink && states_[keep[i]].accept;
      if (acc == static_cast<bool>(accepting)) {
        pos[i] = static_cast<uint32_t>(elems.size());
        block[i] = static_cast<uint32_t>(blocks.size());
        elems.push_back(i);
      }
    }
    if (elems.size() > start) blocks.push_back(Block{start, static_cast<uint32_t>(elems.size()), 0});
  }
  std::vector<uint8_t> in_work;
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (block, letter)
  auto push = [&](uint32_t b, uint32_t l) {
    if (in_work.size() < (static_cast<size_t>(b) + 1) * a) in_work.resize((static_cast<size_t>(b) + 1) * a, 0);
    if (in_work[b * a + l]) return;
    in_work[b * a + l] = 1;
    work.push_back({b, l});
  };
  if (blocks.size() == 2) {
    const uint32_t smaller = blocks[0].end - blocks[0].start <= blocks[1].end - blocks[1].start ? 0 : 1;
    for (uint32_t l = 0; l < a; ++l) push(smaller, static_cast<uint32_t>(l));
  }
  std::vector<uint32_t> stamp(total, 0), touched, members;
  uint32_t now = 0;
  while (!work.empty()) {
    const auto [ab, l] = work.back();
    work.pop_back();
    in_work[ab * a + l] = 0;
    ++now;
    touched.clear();
    members.assign(elems.begin() + blocks[ab].start, elems.begin() + blocks[ab].end);
    for (uint32_t t : members) {
      for (uint32_t p = offset[l][t]; p < offset[l][t + 1]; ++p) {
        const uint32_t s = pred[l][p];
        if (stamp[s] == now) continue;
        stamp[s] = now;
        Block& b = blocks[block[s]];
        const uint32_t dst = b.start + b.marked;
        const uint32_t other = elems[dst];
        std::swap(elems[pos[s]], elems[dst]);
        pos[other] = pos[s];
        pos[s] = dst;
        if (b.marked++ == 0) touched.push_back(block[s]);
      }
    }
    for (uint32_t bi : touched) {
      Block& b = blocks[bi];
      if (b.marked == b.end - b.start) {
        b.marked = 0;
        continue;
      }
      const uint32_t ni = static_cast<uint32_t>(blocks.size());
      const Block nb{b.start, b.start + b.marked, 0};
      b.start += b.marked;
      b.marked = 0;
      blocks.push_back(nb);
      for (uint32_t p = nb.start; p < nb.end; ++p) block[elems[p]] = ni;
      const uint32_t old_size = blocks[bi].end - blocks[bi].start, new_size = nb.end - nb.start;
      for (uint32_t x = 0; x < a; ++x) {
        const bool pending = in_work.size() > static_cast<size_t>(bi) * a + x && in_work[bi * a + x];
        if (pending) {
          push(ni, x);
        } else {
          push(new_size <= old_size ? ni : bi, x);
        }
      }
    }
  }
  cls->assign(n, UINT32_MAX);
  for (uint32_t i = 0; i < m; ++i) (*cls)[keep[i]] = block[i];
  *count = blocks.size();
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
  std::vector<uint32_t> keep;
  for (size_t s = 0; s < n; ++s)
    if (live[s]) keep.push_back(static_cast<uint32_t>(s));
  std::vector<uint32_t> cls;
  size_t count = 0;
  Minimize(keep, live, &cls, &count);
  if (count == 0) {
    // Too large a table to minimize: keep every live state as its own class.
    cls.assign(n, UINT32_MAX);
    for (uint32_t s : keep) cls[s] = static_cast<uint32_t>(count++);
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

Result<CharDfa> CharDfa::Combine(const CharDfa& a, const CharDfa& b, Op op, size_t max_states, bool minimize,
                                 const std::function<bool()>& keep_going) {
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
    if ((i & 127) == 127 && keep_going && !keep_going())
      return Status::ResourceExhausted("compile ran past its time cap");
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

int64_t CharDfa::LongestLength() const {
  if (IsEmpty()) return 0;
  // Trimmed, so any cycle is on an accepting path. Longest path by DFS over the DAG.
  std::vector<int64_t> longest(states_.size(), -2);  // -2 unvisited, -3 on the stack
  bool cyclic = false;
  std::function<int64_t(uint32_t)> visit = [&](uint32_t s) -> int64_t {
    if (longest[s] == -3) {
      cyclic = true;
      return 0;
    }
    if (longest[s] >= 0) return longest[s];
    longest[s] = -3;
    int64_t best = 0;
    for (const auto& e : states_[s].edges) {
      if (cyclic) break;
      best = std::max(best, 1 + visit(e.to));
    }
    longest[s] = best;
    return best;
  };
  const int64_t n = visit(0);
  return cyclic ? -1 : n;
}

std::optional<std::vector<std::u32string>> CharDfa::FiniteStrings(size_t max) const {
  // Trimmed: a cycle means infinitely many strings.
  std::vector<uint8_t> color(states_.size(), 0);
  std::vector<std::u32string> out;
  std::u32string prefix;
  bool ok = true;
  std::function<void(uint32_t)> walk = [&](uint32_t s) {
    if (!ok) return;
    color[s] = 1;
    if (states_[s].accept) out.push_back(prefix);
    if (out.size() > max) ok = false;
    for (const auto& e : states_[s].edges) {
      if (!ok) break;
      if (color[e.to] == 1 || e.hi - e.lo >= max) {
        ok = false;
        break;
      }
      for (uint32_t c = e.lo; c <= e.hi && ok; ++c) {
        prefix.push_back(static_cast<char32_t>(c));
        walk(e.to);
        prefix.pop_back();
      }
    }
    color[s] = 0;
  };
  if (IsEmpty()) return out;
  walk(0);
  if (!ok) return std::nullopt;
  return out;
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
