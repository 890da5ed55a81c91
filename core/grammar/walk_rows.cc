#include "core/grammar/walk_rows.h"

#include <algorithm>

#include "core/grammar/string_chars.h"

namespace radixserve::grammar {

namespace {
// Bounds on the searches behind TakesStringChars (past them: no shortcut).
constexpr size_t kMaxReachSets = 160;
constexpr size_t kMaxCharPairs = 24;

// The bytes each StringCharState goes on with (the rest it rejects).
const ByteSet& TakenBy(StringCharState s) {
  static const auto table = [] {
    std::vector<ByteSet> t(static_cast<size_t>(StringCharState::kReject) + 1);
    for (size_t s = 0; s < t.size(); ++s)
      for (int b = 0; b < 256; ++b)
        if (StringCharStep(static_cast<StringCharState>(s), static_cast<uint8_t>(b)) != StringCharState::kReject)
          t[s].Add(static_cast<uint8_t>(b));
    return t;
  }();
  return table[static_cast<size_t>(s)];
}

bool Covers(const ByteSet& outer, const ByteSet& inner) {
  for (int w = 0; w < 4; ++w)
    if (inner.bits[w] & ~outer.bits[w]) return false;
  return true;
}
}  // namespace

WalkRows::WalkRows(const Pda* pda, StackArena* arena) : pda_(pda), arena_(arena) {
  std::vector<uint32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const uint32_t key = uint32_t{pda_->byte_class(static_cast<uint8_t>(b))} << 8 | StringCharByteKind(static_cast<uint8_t>(b));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    char_bytes_.push_back(static_cast<uint8_t>(b));
  }
  Reset();
}

void WalkRows::Reset() {
  local_of_.assign(local_of_.size(), kNone);
  set_of_.clear();
  flags_.clear();
  rows_.clear();
  Local(StackArena::kDead);
}

uint32_t WalkRows::AddLocal(uint32_t set) {
  if (set >= local_of_.size()) local_of_.resize(set + 1 + set / 2, kNone);
  const uint32_t id = static_cast<uint32_t>(set_of_.size());
  local_of_[set] = id;
  set_of_.push_back(set);
  flags_.push_back(static_cast<uint8_t>((arena_->escaped(set) ? kEscaped : 0) |
                                        (arena_->stacks(set).empty() ? kNoStacks : 0)));
  if (id < kMaxSets) rows_.resize(rows_.size() + 256, kNone);
  return id;
}

uint32_t WalkRows::Fill(uint32_t from, uint8_t byte) {
  const uint32_t next = Local(Advance(set_of_[from], byte));
  uint32_t* row = rows_.data() + size_t{from} * 256;
  for (uint8_t b : pda_->class_bytes(pda_->byte_class(byte))) row[b] = next;
  return next;
}

const std::vector<uint32_t>& WalkRows::CharSuccessors(uint32_t set) {
  auto it = char_successors_.find(set);
  if (it != char_successors_.end()) return it->second;
  // Sets mid-character, paired with where the character's bytes stand: all characters at once,
  // one byte of a kind, so a three-byte character costs a few dozen steps, not 65536.
  std::vector<std::pair<uint32_t, StringCharState>> frontier{{Local(set), StringCharState::kStart}}, next, seen;
  std::vector<uint32_t> out;
  bool dies = false;
  while (!frontier.empty() && !dies) {
    next.clear();
    for (const auto& [from, state] : frontier) {
      // A byte the set cannot take kills it: known without a step (which may build sets).
      if (!Covers(arena_->NextBytesOf(set_of_[from]), TakenBy(state))) {
        dies = true;
        break;
      }
      for (uint8_t b : char_bytes_) {
        const StringCharState after = StringCharStep(state, b);
        if (after == StringCharState::kReject) continue;
        const uint32_t to = Step(from, b);
        if (to == kDead) {
          dies = true;
          break;
        }
        if (after == StringCharState::kDone) {
          out.push_back(set_of_[to]);
        } else if (std::find(seen.begin(), seen.end(), std::make_pair(to, after)) == seen.end()) {
          seen.emplace_back(to, after);
          next.emplace_back(to, after);
          dies = seen.size() > kMaxCharPairs;  // too costly to follow: no shortcut
        }
      }
      if (dies) break;
    }
    frontier.swap(next);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (dies) out.assign(1, StackArena::kDead);
  return char_successors_.emplace(set, std::move(out)).first->second;
}

bool WalkRows::TakesStringChars(uint32_t from, int chars) {
  // Only a set a character leads back to (a string's character loop) is followed: the sets of a
  // bounded repetition are each new, and finding out costs more than walking them.
  if (Step(from, 'a') != from) return false;
  const uint32_t start = set_of_[from];
  if (start < reach_.size()) {
    const uint16_t known = reach_[start];
    if ((known & ~kExact) >= chars) return true;
    if (known & kExact) return false;
  }
  // Breadth first over whole characters, as deep as asked: the depth of the first set a
  // character kills, or a cycle that never meets one.
  std::vector<uint32_t> level{start}, next, seen{start};
  uint16_t result = 0;
  for (int depth = 0;; ++depth) {
    if (level.empty()) {
      result = kUnbounded;
      break;
    }
    if (depth >= chars || seen.size() > kMaxReachSets) {  // as far as it was followed
      result = static_cast<uint16_t>(depth);
      break;
    }
    next.clear();
    bool dies = false;
    for (uint32_t set : level) {
      const std::vector<uint32_t> succ = CharSuccessors(set);  // a copy: the memo may rehash
      if (!succ.empty() && succ[0] == StackArena::kDead) {
        dies = true;
        break;
      }
      for (uint32_t to : succ)
        if (std::find(seen.begin(), seen.end(), to) == seen.end()) {
          seen.push_back(to);
          next.push_back(to);
        }
    }
    if (dies) {
      result = static_cast<uint16_t>(depth) | kExact;
      break;
    }
    level.swap(next);
  }
  if (start >= reach_.size()) reach_.resize(start + 1 + start / 2, 0);
  reach_[start] = std::max(reach_[start], result);
  return (result & ~kExact) >= chars;
}

}  // namespace radixserve::grammar
