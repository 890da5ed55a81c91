#include "core/grammar/pda.h"

#include <algorithm>

namespace radixserve::grammar {

Pda::Pda(const Grammar& g) : sets_(g.byte_sets()), root_(g.root()) {
  alt_starts_.resize(g.rules().size());
  for (size_t r = 0; r < g.rules().size(); ++r) {
    for (const Sequence& seq : g.rules()[r].alternatives) {
      alt_starts_[r].push_back(static_cast<uint32_t>(positions_.size()));
      for (const Symbol& s : seq)
        positions_.push_back(Position{s.kind == Symbol::kBytes ? kBytes : kCall, s.index});
      positions_.push_back(Position{kEnd, 0});
    }
  }
  // Refine one class of all bytes by every set: a byte's class is its membership pattern.
  std::vector<uint32_t> label(256, 0);
  for (const ByteSet& set : sets_) {
    int32_t relabel[512];  // (old label, in set) -> new label
    std::fill(std::begin(relabel), std::end(relabel), -1);
    int32_t next = 0;
    for (int b = 0; b < 256; ++b) {
      int32_t& to = relabel[label[b] * 2 + (set.Has(static_cast<uint8_t>(b)) ? 1 : 0)];
      if (to < 0) to = next++;
      label[b] = static_cast<uint32_t>(to);
    }
  }
  uint32_t classes = 0;
  for (int b = 0; b < 256; ++b) classes = std::max(classes, label[b] + 1);
  class_begin_.assign(classes + 1, 0);
  for (int b = 0; b < 256; ++b) {
    byte_class_[b] = static_cast<uint8_t>(label[b]);
    ++class_begin_[label[b] + 1];
  }
  for (uint32_t c = 0; c < classes; ++c) class_begin_[c + 1] += class_begin_[c];
  class_bytes_.resize(256);
  std::vector<uint16_t> fill(class_begin_.begin(), class_begin_.end() - 1);
  for (int b = 0; b < 256; ++b) class_bytes_[fill[label[b]]++] = static_cast<uint8_t>(b);
}

void FlatMap64::Rehash(size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{0, kMissing});
  mask_ = capacity - 1;
  count_ = 0;
  for (const Slot& s : old)
    if (s.value != kMissing) Insert(s.key, s.value);
}

void FlatMap64::Insert(uint64_t key, uint32_t value) {
  if ((count_ + 1) * 2 > slots_.size()) Rehash(slots_.size() * 2);
  for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
    if (slots_[i].value == kMissing) {
      slots_[i] = Slot{key, value};
      ++count_;
      return;
    }
    if (slots_[i].key == key) {
      slots_[i].value = value;
      return;
    }
  }
}

StackArena::StackArena(const Pda* pda, size_t max_nodes) : pda_(pda), max_nodes_(max_nodes) {
  sets_.push_back(Set{0, 0, 0});  // kDead
}

uint32_t StackArena::NodeOf(uint32_t pos, uint32_t parent) {
  const uint64_t key = (uint64_t{pos} << 32) | parent;
  uint32_t id = node_index_.Find(key);
  if (id != FlatMap64::kMissing) return id;
  if (nodes_.size() >= max_nodes_ && status_.ok())
    status_ = Status::ResourceExhausted("grammar state passed its cap of " + std::to_string(max_nodes_) +
                                        " stack nodes (recursion too deep)");
  id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(Node{pos, parent});
  node_index_.Insert(key, id);
  return id;
}

void StackArena::Close(uint32_t start, uint8_t* flags) {
  work_.clear();
  work_.push_back(start);
  if (++stamp_ == 0) {
    std::fill(visit_stamp_.begin(), visit_stamp_.end(), 0);
    stamp_ = 1;
  }
  while (!work_.empty()) {
    const uint32_t n = work_.back();
    work_.pop_back();
    if (visit_stamp_.size() <= n) visit_stamp_.resize(std::max<size_t>(n + 1, visit_stamp_.size() * 2), 0);
    if (visit_stamp_[n] == stamp_) continue;
    visit_stamp_[n] = stamp_;
    const uint32_t pos = nodes_[n].pos, parent = nodes_[n].parent;
    const Pda::Position& p = pda_->at(pos);
    switch (p.kind) {
      case Pda::kBytes:
        tops_.push_back(n);
        break;
      case Pda::kEnd:
        if (parent == kBottom) {
          *flags |= kAccept;
        } else if (parent == kEscape) {
          *flags |= kEscaped;
        } else {
          work_.push_back(parent);
        }
        break;
      case Pda::kCall: {
        // A call in tail position returns straight to the caller's caller.
        const uint32_t ret = pda_->at(pos + 1).kind == Pda::kEnd ? parent : NodeOf(pos + 1, parent);
        for (uint32_t alt : pda_->alternatives(p.index)) work_.push_back(NodeOf(alt, ret));
        break;
      }
    }
  }
}

uint32_t StackArena::InternSet(std::vector<uint32_t>* tops, uint8_t flags) {
  std::sort(tops->begin(), tops->end());
  tops->erase(std::unique(tops->begin(), tops->end()), tops->end());
  if (tops->empty() && flags == 0) return kDead;
  uint64_t h = 0x9E3779B97F4A7C15ull * (flags + 1);
  for (uint32_t n : *tops) h = (h ^ n) * 0x100000001B3ull;
  auto& bucket = set_index_[h];
  for (uint32_t id : bucket) {
    const Set& s = sets_[id];
    if (s.flags == flags && s.size == tops->size() &&
        std::equal(tops->begin(), tops->end(), pool_.begin() + s.offset))
      return id;
  }
  const uint32_t id = static_cast<uint32_t>(sets_.size());
  sets_.push_back(Set{static_cast<uint32_t>(pool_.size()), static_cast<uint32_t>(tops->size()), flags});
  pool_.insert(pool_.end(), tops->begin(), tops->end());
  bucket.push_back(id);
  return id;
}

uint32_t StackArena::ClosureOf(uint32_t node) {
  uint32_t id = closure_memo_.Find(node);
  if (id != FlatMap64::kMissing) return id;
  tops_.clear();
  uint8_t flags = 0;
  Close(node, &flags);
  id = InternSet(&tops_, flags);
  closure_memo_.Insert(node, id);
  return id;
}

uint32_t StackArena::Initial() {
  tops_.clear();
  uint8_t flags = 0;
  for (uint32_t alt : pda_->alternatives(pda_->root())) Close(NodeOf(alt, kBottom), &flags);
  return InternSet(&tops_, flags);
}

uint32_t StackArena::Single(uint32_t pos, uint32_t parent) { return ClosureOf(NodeOf(pos, parent)); }

uint32_t StackArena::Advance(uint32_t set, uint8_t byte) {
  if (set == kDead) return kDead;
  // A set advanced often gets a dense row of its 256 successors (a string's character loop is
  // advanced once per trie node of a vocabulary walk).
  uint32_t* row = nullptr;
  if (set < dense_index_.size() && dense_index_[set] != FlatMap64::kMissing) {
    row = dense_rows_.data() + size_t{dense_index_[set]} * 256;
    if (row[byte] != FlatMap64::kMissing) return row[byte];
  } else {
    if (set >= hits_.size()) hits_.resize(sets_.size(), 0);
    if (++hits_[set] == kDenseAfter && dense_rows_.size() < kMaxDenseRows * 256) {
      if (set >= dense_index_.size()) dense_index_.resize(sets_.size(), FlatMap64::kMissing);
      dense_index_[set] = static_cast<uint32_t>(dense_rows_.size() / 256);
      dense_rows_.resize(dense_rows_.size() + 256, FlatMap64::kMissing);
      row = dense_rows_.data() + size_t{dense_index_[set]} * 256;
    }
  }
  const uint64_t key = (uint64_t{set} << 8) | byte;
  uint32_t id = advance_memo_.Find(key);
  if (id != FlatMap64::kMissing) {
    if (row) row[byte] = id;
    return id;
  }
  if (!status_.ok()) return kDead;
  merged_.clear();
  uint8_t flags = 0;
  // Index, not span: ClosureOf may grow pool_.
  const uint32_t size = sets_[set].size;
  for (uint32_t i = 0; i < size; ++i) {
    const uint32_t n = pool_[sets_[set].offset + i];
    const uint32_t pos = nodes_[n].pos;
    if (!pda_->bytes(pos).Has(byte)) continue;
    const uint32_t c = ClosureOf(NodeOf(pos + 1, nodes_[n].parent));
    merged_.insert(merged_.end(), pool_.begin() + sets_[c].offset, pool_.begin() + sets_[c].offset + sets_[c].size);
    flags |= sets_[c].flags;
  }
  id = InternSet(&merged_, flags);
  advance_memo_.Insert(key, id);
  if (row) dense_rows_[size_t{dense_index_[set]} * 256 + byte] = id;  // re-read: InternSet may grow
  return id;
}

ByteSet StackArena::NextBytes(uint32_t set) const {
  ByteSet out;
  for (uint32_t n : stacks(set)) out |= pda_->bytes(nodes_[n].pos);
  return out;
}

}  // namespace radixserve::grammar
