#include "core/tool_calls/call_id.h"

#include <random>
#include <thread>

namespace radixserve::tool_calls {

std::string NewToolCallId(ToolCallFamily family) {
  thread_local std::mt19937_64 rng(std::random_device{}() ^ std::hash<std::thread::id>()(std::this_thread::get_id()));
  static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bool nine = family == ToolCallFamily::kMistralNemo;
  std::string id = nine ? "" : "call_";
  for (int i = 0, n = nine ? 9 : 24; i < n; ++i) id += kAlnum[rng() % 62];
  return id;
}

}  // namespace radixserve::tool_calls
