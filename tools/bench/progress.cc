#include "tools/bench/progress.h"

#include <string>

namespace radixserve::bench {

Progress::Progress(std::FILE* out, bool tty, int64_t total)
    : out_(out), tty_(tty), total_(total), start_(std::chrono::steady_clock::now()) {}

void Progress::RequestDone(bool ok) {
  std::lock_guard<std::mutex> l(mu_);
  ++done_;
  if (!ok) ++failed_;
  if (out_ != nullptr) DrawLocked();
}

void Progress::DrawLocked() {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    // Redraws are throttled to ~20/s except the last one.
    if (done_ != total_ && now - last_draw_ < std::chrono::milliseconds(50)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : kWidth;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    std::fprintf(out_, "\r[%s] %lld/%lld requests, %lld failed, %.1f s", bar.c_str(), static_cast<long long>(done_),
                 static_cast<long long>(total_), static_cast<long long>(failed_), elapsed);
    std::fflush(out_);
    return;
  }
  const int decile = total_ > 0 ? static_cast<int>(10 * done_ / total_) : 10;
  if (decile <= last_decile_) return;
  last_decile_ = decile;
  std::fprintf(out_, "progress: %d%% (%lld/%lld requests, %lld failed, %.1f s)\n", decile * 10,
               static_cast<long long>(done_), static_cast<long long>(total_), static_cast<long long>(failed_),
               elapsed);
  std::fflush(out_);
}

void Progress::Close() {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_ || out_ == nullptr) return;
  closed_ = true;
  if (tty_) std::fprintf(out_, "\n");
}

}  // namespace radixserve::bench
