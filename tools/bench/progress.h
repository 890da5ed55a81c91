// Run progress on a terminal: a live bar redrawn in place when the stream is
// a TTY, otherwise one plain line each time another 10% of requests is done.
// Thread-safe: request threads report concurrently.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>

namespace radixserve::bench {

class Progress {
 public:
  // out == nullptr disables output. tty: redraw in place (decided by the caller, e.g. isatty).
  Progress(std::FILE* out, bool tty, int64_t total);

  void RequestDone(bool ok);
  // Ends the bar's line.
  void Close();

 private:
  void DrawLocked();

  std::FILE* out_;
  const bool tty_;
  const int64_t total_;
  std::mutex mu_;
  int64_t done_ = 0, failed_ = 0;
  int last_decile_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_{};
  bool closed_ = false;
};

}  // namespace radixserve::bench
