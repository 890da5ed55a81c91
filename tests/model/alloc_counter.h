// Test helper: counts calls to the global operator new in this program
// (replacing it program-wide), to check that hot paths do not allocate.
// Include from exactly one translation unit per test program.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace radixserve::testing_util {
inline std::atomic<long> g_allocations{0};
inline long Allocations() { return g_allocations.load(); }
}  // namespace radixserve::testing_util

void* operator new(std::size_t n) {
  radixserve::testing_util::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// Every form that can pair with the deletes below must come from the same malloc, or a sanitizer
// (rightly) reports mismatched allocation and deallocation.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  radixserve::testing_util::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
