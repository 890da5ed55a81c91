// RouDi, iceoryx's central daemon: its memory-pool configuration, whether one
// is running, and a child-process handle that starts and stops one.
// RouDiProcess is not copyable; Stop() is idempotent. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/status.h"

namespace radixserve::transport {

struct MemPool {
  uint32_t size;   // payload bytes per chunk (iceoryx adds its own chunk header)
  uint32_t count;  // chunks in this pool
};

struct RouDiConfig {
  std::vector<MemPool> pools;
  std::string group;  // the POSIX group allowed to read and write the segment ("": iceoryx's default)
  std::string ToToml() const;
  uint32_t max_payload() const;
  uint64_t total_bytes() const;
};

// Pools for a pipeline whose largest message is `max_message_bytes`: many small chunks for
// requests and outputs, fewer large ones for forward batches and results.
RouDiConfig PipelineRouDiConfig(uint32_t max_message_bytes);

// True when a RouDi holds its lock on this machine.
bool RouDiRunning();
// Waits until no RouDi runs (another user of the machine may hold the one RouDi); false on timeout.
bool WaitUntilNoRouDi(std::chrono::milliseconds timeout);

// The largest chunk payload the running RouDi offers, read from the config file on its command line
// (-c / --config-file), else /etc/iceoryx/roudi_config.toml, else iceoryx's built-in pools (4 MiB).
// NotFound when no iox-roudi process is visible (e.g. another PID namespace).
Result<uint32_t> RunningRouDiMaxPayload();
// Largest mempool size in a RouDi TOML config text; InvalidArgument when it lists none.
Result<uint32_t> MaxPayloadFromToml(const std::string& toml);

class RouDiProcess {
 public:
  RouDiProcess() = default;
  RouDiProcess(const RouDiProcess&) = delete;
  RouDiProcess& operator=(const RouDiProcess&) = delete;
  ~RouDiProcess() { Stop(); }

  // Writes `config` to `config_path`, starts `iox-roudi` (found on PATH, or RADIXSERVE_ROUDI) with
  // the robust-IPC library (robust_ipc.h) and libradixserve_lazy_shm.so (lazy_shm_preload.cc: its
  // segments become resident as they are used, not when it zeroes them) preloaded, and waits until
  // it accepts clients. FailedPrecondition when another RouDi is already running.
  Status Start(const RouDiConfig& config, const std::string& config_path,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGTERM, wait, SIGKILL after a grace period; removes what a killed RouDi leaves in /dev/shm,
  // and the config file Start wrote (other launchers read it while RouDi runs).
  void Stop();
  // False once the child exited (it is reaped and its leftovers removed).
  bool running();
  pid_t pid() const { return pid_; }
  // RouDi's shared-memory segments (management and payload) just after Start: their size, and
  // the bytes of them resident then.
  uint64_t shm_reserved_bytes() const { return shm_reserved_; }
  uint64_t shm_resident_bytes() const { return shm_resident_; }
  // Why libradixserve_lazy_shm.so was not preloaded (Ok when it was).
  const Status& lazy_shm_status() const { return lazy_shm_status_; }

 private:
  void RemoveConfig();

  pid_t pid_ = -1;
  std::string config_path_;  // written by Start, removed by Stop
  uint64_t shm_reserved_ = 0, shm_resident_ = 0;
  Status lazy_shm_status_;
};

// Removes iceoryx's leftovers (shared-memory segments, lock and socket files) after a RouDi died.
// Only call when no RouDi is running.
void RemoveRouDiLeftovers();

}  // namespace radixserve::transport
