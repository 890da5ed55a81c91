// The built-in default model: the real stories260K (Karpathy's TinyStories,
// MIT licence; models/stories260K/README.md) embedded in the radixserve
// binary and written to the user's cache directory on first use, so that
// radixserve answers in English out of the box without downloading anything.
// Thread-compatible; concurrent processes are safe (atomic rename).
#pragma once

#include <span>
#include <string>

#include "core/util/status.h"

namespace radixserve::builtin_model {

// The name launch and generate log when they fall back to the built-in model.
inline constexpr const char* kName = "stories260K";

// $RADIXSERVE_CACHE_DIR, else $XDG_CACHE_HOME/radixserve, else $HOME/.cache/radixserve.
std::string CacheDirectory();
// The embedded GGUF bytes.
std::span<const unsigned char> Bytes();
// Path of the default model in the cache directory; writes it there when absent or damaged.
Result<std::string> EnsureDefaultModel();

}  // namespace radixserve::builtin_model
