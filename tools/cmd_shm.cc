// `radixserve shm`: the running RouDi's shared-memory pools, per segment and pool: chunk payload
// size, chunks, chunks in use, fewest ever free. Registers with RouDi for the moment it reads.
//   radixserve shm [--json] [--timeout SECONDS]
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>

#include "tools/command.h"
#include "transport/mempool_usage.h"

namespace radixserve::tools {
namespace {

struct ShmOptions {
  bool json = false;
  double timeout_s = 5;
};

int RunShm(const ShmOptions& o) {
  if (o.timeout_s <= 0) {
    std::fprintf(stderr, "error: --timeout must be positive\n");
    return 2;
  }
  // Unique per process: RouDi refuses a second registration under a name in use.
  std::string name = "radixserve_shm_" + std::to_string(::getpid());
  auto usage = transport::ReadMemPoolUsage(name, std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000)));
  if (!usage.ok()) {
    std::fprintf(stderr, "error: %s\n", usage.status().message().c_str());
    return 1;
  }
  std::string out = o.json ? transport::MemPoolUsageToJson(*usage) + "\n" : transport::FormatMemPoolUsage(*usage);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);  // before iceoryx logs anything at exit
  return 0;
}

CommandRegistrar shm_registrar({"shm", "Shared-memory pool usage of the running iceoryx RouDi",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<ShmOptions>();
                        app.add_flag("--json", o->json, "Print one line of JSON");
                        app.add_option("--timeout", o->timeout_s, "Seconds to wait for RouDi's report")
                            ->capture_default_str();
                        return [o] { return RunShm(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
