// The context a server runs with: the operator's choice (the `context` launch argument, as
// llama.cpp's -c), at most what the model file declares. Every node and RouDi's pool sizing read
// it from here, so that rows, messages and prompt checks agree. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "core/gguf/gguf_reader.h"
#include "core/util/status.h"

namespace radixserve::model {

// What `context` = 0 gives: the model's context, but no more than this many tokens (Llama 3.1
// files declare 131072, whose KV rows and message pools would not fit an edge box).
inline constexpr int64_t kDefaultServedContext = 4096;

// The file's <general.architecture>.context_length.
Result<int32_t> ModelContextLength(const gguf::GgufFile& file);

// `requested` tokens (0: the default above), checked against the file's context length.
Result<int32_t> ServedContext(const gguf::GgufFile& file, int64_t requested);

}  // namespace radixserve::model
