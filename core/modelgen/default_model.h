// The built-in default model: a "tiny" generated model kept in the user's
// cache directory and generated on first use, so that radixserve runs out of
// the box without downloading anything. Thread-compatible (a process-wide
// first call generates; concurrent processes are safe through atomic rename).
#pragma once

#include <string>

#include "core/util/status.h"

namespace radixserve::modelgen {

// $RADIXSERVE_CACHE_DIR, else $XDG_CACHE_HOME/radixserve, else $HOME/.cache/radixserve.
std::string CacheDirectory();
// Path of the default model; generates it (a few seconds) when absent.
Result<std::string> EnsureDefaultModel();

}  // namespace radixserve::modelgen
