// Page arithmetic of the KV pool (SCHEDULER_SPEC 5): the one place the
// rounding of token counts to whole pages is written.
#pragma once

#include <cstdint>

namespace radixserve::sched {

// Pages that hold `tokens` tokens.
constexpr int64_t PagesFor(int64_t tokens, int64_t page_size) { return (tokens + page_size - 1) / page_size; }
// `tokens` rounded up to whole pages, in tokens.
constexpr int64_t PageCeil(int64_t tokens, int64_t page_size) { return PagesFor(tokens, page_size) * page_size; }
// `tokens` rounded down to whole pages, in tokens.
constexpr int64_t PageFloor(int64_t tokens, int64_t page_size) { return tokens / page_size * page_size; }

}  // namespace radixserve::sched
