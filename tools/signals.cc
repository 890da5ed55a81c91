#include "tools/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace radixserve::tools {
namespace {

int g_pipe[2] = {-1, -1};

// Async-signal-safe: only a write to the pipe. A handler (not sigwait) works whichever thread the
// kernel picks, including threads libraries start before main (OpenBLAS's pool).
void OnSignal(int sig) {
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t n = ::write(g_pipe[1], &b, 1);
  (void)n;
}

}  // namespace

void InstallStopSignals(std::function<void()> on_first, std::function<void()> on_second) {
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
    std::perror("pipe2");
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  std::thread([on_first = std::move(on_first), on_second = std::move(on_second)] {
    unsigned char b = 0;
    while (::read(g_pipe[0], &b, 1) != 1) {
    }
    on_first();
    for (;;) {
      if (::read(g_pipe[0], &b, 1) != 1) continue;
      if (on_second) {
        on_second();
        continue;
      }
      std::fprintf(stderr, "second signal: exiting now\n");
      _exit(130);
    }
  }).detach();
}

}  // namespace radixserve::tools
