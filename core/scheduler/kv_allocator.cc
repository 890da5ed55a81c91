#include "core/scheduler/kv_allocator.h"

#include "core/scheduler/paging.h"

#include <glog/logging.h>

namespace radixserve::sched {

void KvAllocator::Free(std::span<const int32_t> slots) {
  if (slots.empty()) return;
  if (in_free_group_) {
    group_.insert(group_.end(), slots.begin(), slots.end());
    return;
  }
  FreeNow(slots);
}

void KvAllocator::FreeGroupEnd() {
  in_free_group_ = false;
  if (!group_.empty()) FreeNow(group_);
  group_.clear();
}

// ---- page_size 1 ----------------------------------------------------------------

TokenKvAllocator::TokenKvAllocator(int64_t size) : KvAllocator(1, size) { Clear(); }

void TokenKvAllocator::Clear() {
  ring_.resize(size_);
  for (int64_t i = 0; i < size_; ++i) ring_[i] = static_cast<int32_t>(i + 1);
  head_ = 0;
  count_ = size_;
  slot_free_.assign(size_ + 1, 1);
  slot_free_[0] = 0;  // reserved dummy slot
}

bool TokenKvAllocator::Alloc(int64_t n, std::vector<int32_t>* out) {
  if (n > count_) return false;
  for (int64_t i = 0; i < n; ++i) {
    int32_t s = ring_[head_];
    slot_free_[s] = 0;
    out->push_back(s);
    if (++head_ == size_) head_ = 0;
  }
  count_ -= n;
  return true;
}

bool TokenKvAllocator::AllocExtend(std::span<const int32_t> prefix_lens, std::span<const int32_t> seq_lens,
                                   std::span<const int32_t>, std::vector<int32_t>* out) {
  int64_t n = 0;
  for (size_t i = 0; i < seq_lens.size(); ++i) n += seq_lens[i] - prefix_lens[i];
  return Alloc(n, out);
}

bool TokenKvAllocator::AllocDecode(std::span<const int32_t> seq_lens, std::span<const int32_t>,
                                   std::vector<int32_t>* out) {
  return Alloc(static_cast<int64_t>(seq_lens.size()), out);
}

void TokenKvAllocator::FreeNow(std::span<const int32_t> slots) {
  for (int32_t s : slots) {
    CHECK(s > 0 && s <= size_) << "freeing KV slot out of range: " << s;
    CHECK(!slot_free_[s]) << "double free of KV slot " << s;
    slot_free_[s] = 1;
    int64_t tail = head_ + count_;
    if (tail >= size_) tail -= size_;
    ring_[tail] = s;
    ++count_;
  }
}

// ---- paged ------------------------------------------------------------------------

PagedKvAllocator::PagedKvAllocator(int32_t page_size, int64_t size)
    : KvAllocator(page_size, size / page_size * page_size), num_pages_(size / page_size) {
  CHECK_GT(page_size, 1);
  Clear();
}

void PagedKvAllocator::Clear() {
  free_pages_.clear();
  for (int64_t p = num_pages_; p >= 1; --p) free_pages_.push_back(static_cast<int32_t>(p));
  page_free_.assign(num_pages_ + 1, 1);
  page_free_[0] = 0;
  free_stamp_.assign(num_pages_ + 1, 0);
}

int32_t PagedKvAllocator::PopPage() {
  int32_t p = free_pages_.back();
  free_pages_.pop_back();
  page_free_[p] = 0;
  return p;
}

bool PagedKvAllocator::Alloc(int64_t n, std::vector<int32_t>* out) {
  CHECK_EQ(n % page_size_, 0) << "paged Alloc needs a page-aligned count";
  int64_t pages = n / page_size_;
  if (pages > static_cast<int64_t>(free_pages_.size())) return false;
  for (int64_t i = 0; i < pages; ++i) {
    int32_t base = PopPage() * page_size_;
    for (int32_t j = 0; j < page_size_; ++j) out->push_back(base + j);
  }
  return true;
}

bool PagedKvAllocator::AllocExtend(std::span<const int32_t> prefix_lens, std::span<const int32_t> seq_lens,
                                   std::span<const int32_t> last_locs, std::vector<int32_t>* out) {
  const int32_t P = page_size_;
  int64_t need = 0;
  for (size_t i = 0; i < seq_lens.size(); ++i)
    need += PagesFor(seq_lens[i], P) - PagesFor(prefix_lens[i], P);
  if (need > static_cast<int64_t>(free_pages_.size())) return false;
  for (size_t i = 0; i < seq_lens.size(); ++i) {
    const int32_t prefix = prefix_lens[i], seq = seq_lens[i];
    const int32_t prefix_ceil = static_cast<int32_t>(PageCeil(prefix, P));
    // Part 1: the rest of the partially filled page after the prefix.
    int32_t pos = prefix;
    for (int32_t loc = last_locs[i] + 1; pos < std::min(seq, prefix_ceil); ++pos, ++loc) {
      CHECK_GE(last_locs[i], 0) << "partial page without a last location";
      out->push_back(loc);
    }
    // Parts 2 and 3: whole pages, then the tail page starting at offset 0.
    while (pos < seq) {
      int32_t base = PopPage() * P;
      for (int32_t j = 0; j < P && pos < seq; ++j, ++pos) out->push_back(base + j);
    }
  }
  return true;
}

bool PagedKvAllocator::AllocDecode(std::span<const int32_t> seq_lens, std::span<const int32_t> last_locs,
                                   std::vector<int32_t>* out) {
  const int32_t P = page_size_;
  int64_t need = 0;
  for (int32_t s : seq_lens) need += ((s - 1) % P == 0) ? 1 : 0;
  if (need > static_cast<int64_t>(free_pages_.size())) return false;
  for (size_t i = 0; i < seq_lens.size(); ++i) {
    if ((seq_lens[i] - 1) % P == 0) {
      out->push_back(PopPage() * P);
    } else {
      out->push_back(last_locs[i] + 1);
    }
  }
  return true;
}

void PagedKvAllocator::FreeNow(std::span<const int32_t> slots) {
  if (++stamp_ == 0) {
    std::fill(free_stamp_.begin(), free_stamp_.end(), 0);
    stamp_ = 1;
  }
  freed_scratch_.clear();
  for (int32_t s : slots) {
    int32_t p = s / page_size_;
    CHECK(p > 0 && p <= num_pages_) << "freeing KV slot out of range: " << s;
    if (free_stamp_[p] == stamp_) continue;
    free_stamp_[p] = stamp_;
    CHECK(!page_free_[p]) << "double free of KV page " << p << " (slot " << s << ")";
    page_free_[p] = 1;
    freed_scratch_.push_back(p);
  }
  // Prepend in order: the first freed page becomes the head of the free list.
  for (auto it = freed_scratch_.rbegin(); it != freed_scratch_.rend(); ++it) free_pages_.push_back(*it);
}

std::unique_ptr<KvAllocator> MakeKvAllocator(int32_t page_size, int64_t size) {
  if (page_size <= 1) return std::make_unique<TokenKvAllocator>(size);
  return std::make_unique<PagedKvAllocator>(page_size, size);
}

}  // namespace radixserve::sched
