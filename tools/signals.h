// Signal handling for the long-running subcommands: SIGINT/SIGTERM are
// caught by a handler that wakes one thread, which runs a callback (the
// first signal) and exits the process at once on the second.
#pragma once

#include <functional>

namespace radixserve::tools {

// `on_first` runs on the signal thread. `on_second`, when given,
// runs on the next signal instead of the immediate exit (it decides itself whether to exit).
void InstallStopSignals(std::function<void()> on_first, std::function<void()> on_second = nullptr);

}  // namespace radixserve::tools
