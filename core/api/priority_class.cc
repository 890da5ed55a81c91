#include "core/api/priority_class.h"

#include <charconv>

namespace radixserve::api {

std::optional<PriorityClass> PriorityClassNamed(std::string_view name) {
  for (const auto& c : kPriorityClasses)
    if (name == c.name) return c.cls;
  return std::nullopt;
}

PriorityClass ClassOfPriority(int64_t priority) {
  if (priority >= InfoOf(PriorityClass::kInteractive).priority) return PriorityClass::kInteractive;
  if (priority <= InfoOf(PriorityClass::kBulk).priority) return PriorityClass::kBulk;
  return PriorityClass::kDefault;
}

Result<int64_t> ParsePriority(std::string_view text) {
  if (auto c = PriorityClassNamed(text)) return InfoOf(*c).priority;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Status::InvalidArgument("priority must be interactive, default, bulk or an integer, got '" +
                                   std::string(text) + "'");
  if (v < kMinPriority || v > kMaxPriority)
    return Status::InvalidArgument("priority must be in [" + std::to_string(kMinPriority) + ", " +
                                   std::to_string(kMaxPriority) + "], got " + std::string(text));
  return v;
}

Result<std::array<int64_t, kNumPriorityClasses>> ParseClassLimits(std::string_view text) {
  std::array<int64_t, kNumPriorityClasses> limits{};
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    auto cls = PriorityClassNamed(name);
    if (eq == std::string_view::npos || !cls)
      return Status::InvalidArgument("class limits: expected interactive=N, default=N or bulk=N, got '" +
                                     std::string(item) + "'");
    std::string_view num = item.substr(eq + 1);
    int64_t v = -1;
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || end != num.data() + num.size() || v < 0)
      return Status::InvalidArgument("class limits: " + std::string(name) + " needs a count >= 0, got '" +
                                     std::string(num) + "'");
    limits[static_cast<size_t>(*cls)] = v;
  }
  return limits;
}

}  // namespace radixserve::api
