// KV slot allocators (SCHEDULER_SPEC 5.2). The scheduler only hands out slot
// *indices*; the worker owns the KV tensors. Slot 0 (page 0) is reserved as
// the dummy slot, so usable slots are [page_size, page_size * (num_pages + 1)).
//
// TokenKvAllocator (page_size 1): FIFO free list, alloc takes from the head,
// free appends. PagedKvAllocator (page_size > 1): pages, freed pages are
// prepended (LIFO reuse); alloc_extend fills the partial page, then whole
// pages, then the tail page. Free groups batch the frees of one result pass.
// Not thread-safe: scheduler thread only. Double frees are detected (CHECK).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace radixserve::sched {

class KvAllocator {
 public:
  virtual ~KvAllocator() = default;

  int32_t page_size() const { return page_size_; }
  // Usable token slots (max_total_num_tokens), excluding the reserved page.
  int64_t size() const { return size_; }
  virtual int64_t available_size() const = 0;

  // Appends n slots to *out (n a multiple of page_size). False (nothing taken) when short.
  virtual bool Alloc(int64_t n, std::vector<int32_t>* out) = 0;
  // Per request i: slots for positions [prefix_lens[i], seq_lens[i]); last_locs[i] is the slot
  // of position prefix_lens[i]-1 (or -1). Appends in request order. All or nothing.
  virtual bool AllocExtend(std::span<const int32_t> prefix_lens, std::span<const int32_t> seq_lens,
                           std::span<const int32_t> last_locs, std::vector<int32_t>* out) = 0;
  // One slot per request for position seq_lens[i]-1 (seq_lens are the new lengths).
  virtual bool AllocDecode(std::span<const int32_t> seq_lens, std::span<const int32_t> last_locs,
                           std::vector<int32_t>* out) = 0;
  // Frees slots (paged: the pages they lie in; every slot of a page must be freed together).
  void Free(std::span<const int32_t> slots);

  // Frees between Begin and End are applied together at End.
  void FreeGroupBegin() { in_free_group_ = true; }
  void FreeGroupEnd();

  virtual bool IsSlotFree(int32_t slot) const = 0;
  virtual void Clear() = 0;

 protected:
  KvAllocator(int32_t page_size, int64_t size) : page_size_(page_size), size_(size) {}
  virtual void FreeNow(std::span<const int32_t> slots) = 0;

  int32_t page_size_;
  int64_t size_;

 private:
  bool in_free_group_ = false;
  std::vector<int32_t> group_;
};

class TokenKvAllocator final : public KvAllocator {
 public:
  explicit TokenKvAllocator(int64_t size);
  int64_t available_size() const override { return count_; }
  bool Alloc(int64_t n, std::vector<int32_t>* out) override;
  bool AllocExtend(std::span<const int32_t> prefix_lens, std::span<const int32_t> seq_lens,
                   std::span<const int32_t> last_locs, std::vector<int32_t>* out) override;
  bool AllocDecode(std::span<const int32_t> seq_lens, std::span<const int32_t> last_locs,
                   std::vector<int32_t>* out) override;
  bool IsSlotFree(int32_t slot) const override { return slot_free_[slot] != 0; }
  void Clear() override;

 private:
  void FreeNow(std::span<const int32_t> slots) override;

  std::vector<int32_t> ring_;  // capacity size_; [head_, head_+count_) mod size_ are free
  int64_t head_ = 0;
  int64_t count_ = 0;
  std::vector<uint8_t> slot_free_;
};

class PagedKvAllocator final : public KvAllocator {
 public:
  PagedKvAllocator(int32_t page_size, int64_t size);
  int64_t available_size() const override { return static_cast<int64_t>(free_pages_.size()) * page_size_; }
  bool Alloc(int64_t n, std::vector<int32_t>* out) override;
  bool AllocExtend(std::span<const int32_t> prefix_lens, std::span<const int32_t> seq_lens,
                   std::span<const int32_t> last_locs, std::vector<int32_t>* out) override;
  bool AllocDecode(std::span<const int32_t> seq_lens, std::span<const int32_t> last_locs,
                   std::vector<int32_t>* out) override;
  bool IsSlotFree(int32_t slot) const override { return page_free_[slot / page_size_] != 0; }
  void Clear() override;
  int64_t num_pages() const { return num_pages_; }

 private:
  void FreeNow(std::span<const int32_t> slots) override;
  int32_t PopPage();

  int64_t num_pages_;
  std::vector<int32_t> free_pages_;  // stack: back() is the head of the free list
  std::vector<uint8_t> page_free_;
  std::vector<uint32_t> free_stamp_;  // dedups pages within one Free call
  uint32_t stamp_ = 0;
  std::vector<int32_t> freed_scratch_;
};

// page_size 1 → TokenKvAllocator, otherwise PagedKvAllocator. size is rounded down to whole pages.
std::unique_ptr<KvAllocator> MakeKvAllocator(int32_t page_size, int64_t size);

}  // namespace radixserve::sched
