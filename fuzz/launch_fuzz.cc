// Fuzz target: arbitrary bytes as a launch file (YAML). LaunchLoader reads files, so the
// bytes go to a per-process temporary file first.
// Properties: no crash; a refused file always says why.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz/fuzz_check.h"
#include "launch/launch_loader.h"

namespace launch = radixserve::launch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/radixserve-fuzz-launch-" + std::to_string(getpid()) + ".yaml";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  launch::LaunchLoader loader;
  launch::ProvidedArgs args;
  args["model"] = launch::ProvidedArg{"m.gguf", {}};
  bool ok = loader.Load(path, args);
  if (!ok) {
    FUZZ_CHECK(!loader.errors().empty());
  }
  std::remove(path.c_str());
  return 0;
}
