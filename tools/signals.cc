#include "tools/signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace radixserve::tools {

void InstallStopSignals(std::function<void()> on_first) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, on_first = std::move(on_first)] {
    int sig = 0;
    sigwait(&set, &sig);
    on_first();
    sigwait(&set, &sig);
    std::fprintf(stderr, "second signal: exiting now\n");
    _exit(130);
  }).detach();
}

}  // namespace radixserve::tools
