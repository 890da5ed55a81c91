// Robust shared-memory locks for iceoryx 2.0 (robust_ipc_preload.cc says why): the preload
// library, and the re-exec that puts it under every radixserve process before any library runs.
// RADIXSERVE_ROBUST_IPC=0 turns both off (only to show the hang they prevent). Thread-compatible.
#pragma once

#include <string>

#include "core/util/status.h"

namespace radixserve::transport {

// The runtime module `file_name` (a preload library) in ../lib or next to this executable;
// NotFound, naming both places, when neither has it.
Result<std::string> RuntimeModulePath(const std::string& file_name);
// libradixserve_robust_ipc.so (RuntimeModulePath).
Result<std::string> RobustIpcLibrary();
// False when RADIXSERVE_ROBUST_IPC=0.
bool RobustIpcWanted();
// Unless LD_PRELOAD already holds the library: adds it and execs /proc/self/exe with the same
// argv (same pid), so that the C library's mutex calls go through it from the first one. Returns
// only when nothing needs doing or the exec failed (then the reason is on stderr).
void ReexecWithRobustIpc(char** argv);

}  // namespace radixserve::transport
