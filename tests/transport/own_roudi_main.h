// The main() of a transport test that needs a RouDi of its own: waits until no other RouDi runs,
// starts one (with the robust-IPC preload, as radixserve does), runs the tests in a child process
// that registers with it, then stops it and checks it is gone, config file included.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "transport/roudi_process.h"

namespace radixserve::transport {

inline int RunTestsWithOwnRouDi(int argc, char** argv, const std::string& config_name, uint32_t max_message_bytes) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!WaitUntilNoRouDi(std::chrono::seconds(120))) {
    std::fprintf(stderr, "another RouDi kept running\n");
    return 1;
  }
  RouDiProcess roudi;
  const std::string cfg = (std::filesystem::temp_directory_path() / config_name).string();
  const RouDiConfig config = PipelineRouDiConfig(max_message_bytes);
  Status s = roudi.Start(config, cfg);
  if (!s.ok()) {
    std::fprintf(stderr, "cannot start RouDi: %s\n", s.ToString().c_str());
    return 1;
  }
  // iceoryx zeroes its new segments; with libradixserve_lazy_shm.so that leaves them holes, so
  // RouDi starts with a few hundred KiB of its management segment resident (what it wrote) and
  // the tests below pass messages through the rest.
  if (!roudi.lazy_shm_status().ok() || roudi.shm_reserved_bytes() < config.total_bytes() ||
      roudi.shm_resident_bytes() > (4u << 20)) {
    std::fprintf(stderr, "RouDi's segments resident at start: %llu of %llu bytes (%s)\n",
                 static_cast<unsigned long long>(roudi.shm_resident_bytes()),
                 static_cast<unsigned long long>(roudi.shm_reserved_bytes()), roudi.lazy_shm_status().ToString().c_str());
    roudi.Stop();
    return 1;
  }
  pid_t child = fork();
  if (child == 0) std::exit(RUN_ALL_TESTS());
  int status = 0;
  waitpid(child, &status, 0);
  roudi.Stop();
  if (RouDiRunning()) {
    std::fprintf(stderr, "RouDi still running after Stop()\n");
    return 1;
  }
  if (std::filesystem::exists(cfg)) {
    std::fprintf(stderr, "RouDi's config %s left behind after Stop()\n", cfg.c_str());
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace radixserve::transport
