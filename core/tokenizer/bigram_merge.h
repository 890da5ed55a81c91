// The merge loop shared by the SPM and BPE tokenizers: a word is a doubly
// linked list of symbols (byte ranges with a vocabulary id); candidate merges
// of neighbours wait in a heap, best first (by score for SPM, by rank for
// BPE), and the best is applied until none is left. A queued pair whose side
// was merged meanwhile is recognised by its length and skipped.
// Header-only; no state beyond the caller's buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace radixserve::tokenizer {

struct MergeSymbol {
  uint32_t begin;  // byte offset in the text being encoded
  uint32_t len;    // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
  int32_t id;      // vocab (or synthetic) id of the symbol's text, or -1 when it cannot merge
};

// Bigram: has `left`, `right`, `len` (byte length of the merged symbol) and `id` (the merged id).
// Order: the heap comparator (std::push_heap order). try_add(left, right) queues a candidate.
template <typename Bigram, typename Order, typename TryAdd>
void ApplyMerges(std::vector<MergeSymbol>& syms, std::vector<Bigram>& heap, TryAdd&& try_add) {
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Order{});
    const Bigram b = heap.back();
    heap.pop_back();
    MergeSymbol& left = syms[b.left];
    MergeSymbol& right = syms[b.right];
    // Stale: one side was merged elsewhere since this pair was queued.
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
    left.len = b.len;
    left.id = b.id;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }
}

}  // namespace radixserve::tokenizer
