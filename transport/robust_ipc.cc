#include "transport/robust_ipc.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace radixserve::transport {

Result<std::string> RuntimeModulePath(const std::string& file_name) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::IOError("cannot read /proc/self/exe: " + ec.message());
  for (const auto& dir : {exe.parent_path().parent_path() / "lib", exe.parent_path()}) {
    auto path = dir / file_name;
    if (std::filesystem::exists(path, ec)) return path.string();
  }
  return Status::NotFound(file_name + " is neither in ../lib nor next to " + exe.string());
}

Result<std::string> RobustIpcLibrary() {
  Result<std::string> path = RuntimeModulePath("libradixserve_robust_ipc.so");
  if (!path.ok())
    return Status::NotFound(path.status().message() + ": without it a node killed mid-publish can block RouDi for good");
  return path;
}

bool RobustIpcWanted() {
  const char* v = std::getenv("RADIXSERVE_ROBUST_IPC");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

void ReexecWithRobustIpc(char** argv) {
  if (!RobustIpcWanted()) return;
  auto lib = RobustIpcLibrary();
  if (!lib.ok()) {
    std::fprintf(stderr, "radixserve: %s\n", lib.status().message().c_str());
    return;
  }
  const char* old = std::getenv("LD_PRELOAD");
  const std::string current = old ? old : "";
  if (current.find(*lib) != std::string::npos) return;  // already under it (after the exec)
  const std::string preload = current.empty() ? *lib : *lib + ":" + current;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "radixserve: cannot re-exec with %s: %s\n", lib->c_str(), std::strerror(errno));
  if (old) {
    ::setenv("LD_PRELOAD", old, 1);
  } else {
    ::unsetenv("LD_PRELOAD");
  }
}

}  // namespace radixserve::transport
