// Ids for the tool calls the server returns (OpenAI's tool_calls[i].id), in the shape the family's
// chat template accepts back in the next turn: Mistral Nemo's template refuses anything but 9
// letters and digits; everything else gets OpenAI's "call_" + 24 letters and digits.
// Thread-safe (a generator per thread).
#pragma once

#include <string>

#include "core/tool_calls/family.h"

namespace radixserve::tool_calls {

std::string NewToolCallId(ToolCallFamily family);

}  // namespace radixserve::tool_calls
