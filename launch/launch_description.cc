#include "launch/launch_description.h"

namespace radixserve::launch {

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string LaunchError::ToString() const { return where.ToString() + ": " + message; }

std::string JoinErrors(const std::vector<LaunchError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.ToString();
  }
  return out;
}

}  // namespace radixserve::launch
