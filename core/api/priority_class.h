// Priority classes: the names clients and operators use for request
// priorities (interactive, default, bulk), the number each stands for, and
// the class a numeric priority falls in. The one definition of all three:
// the parser, the per-class limits and the per-class metrics read it here.
// Larger numbers are more important (the priority policy's default,
// low_values_first = false); the gaps (20) exceed the policy's default
// preemption threshold (10), so each class may preempt the ones below it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/util/status.h"

namespace radixserve::api {

enum class PriorityClass : uint8_t { kInteractive = 0, kDefault = 1, kBulk = 2 };
inline constexpr size_t kNumPriorityClasses = 3;

struct PriorityClassInfo {
  PriorityClass cls;
  const char* name;
  int64_t priority;
};
inline constexpr std::array<PriorityClassInfo, kNumPriorityClasses> kPriorityClasses = {{
    {PriorityClass::kInteractive, "interactive", 40},
    {PriorityClass::kDefault, "default", 20},
    {PriorityClass::kBulk, "bulk", 0},
}};

inline const PriorityClassInfo& InfoOf(PriorityClass c) { return kPriorityClasses[static_cast<size_t>(c)]; }
inline const char* NameOf(PriorityClass c) { return InfoOf(c).name; }
// A class by name; nullopt when unknown.
std::optional<PriorityClass> PriorityClassNamed(std::string_view name);
// The class a numeric priority falls in: at least interactive's number, at most bulk's, or default.
PriorityClass ClassOfPriority(int64_t priority);
// "interactive|default|bulk" or an integer in [kMinPriority, kMaxPriority] (a header's value).
Result<int64_t> ParsePriority(std::string_view text);
inline constexpr int64_t kMinPriority = -(int64_t(1) << 31), kMaxPriority = int64_t(1) << 31;

// Per-class limits, "interactive=N,default=N,bulk=N" (any subset; 0 or absent: no limit).
Result<std::array<int64_t, kNumPriorityClasses>> ParseClassLimits(std::string_view text);

}  // namespace radixserve::api
