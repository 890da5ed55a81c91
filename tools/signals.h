// Signal handling for the long-running subcommands: SIGINT/SIGTERM are
// blocked in every thread and received by one waiting thread, which runs a
// callback (the first signal) and exits the process at once on the second.
#pragma once

#include <functional>

namespace radixserve::tools {

// Call before creating any thread. `on_first` runs on the signal thread.
void InstallStopSignals(std::function<void()> on_first);

}  // namespace radixserve::tools
