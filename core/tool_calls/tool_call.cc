#include "core/tool_calls/tool_call.h"

namespace radixserve::tool_calls {

void AppendDelta(const OutputDelta& delta, ParsedOutput* out) {
  out->content += delta.content;
  out->reasoning += delta.reasoning;
  for (const ToolCallDelta& d : delta.calls) {
    if (d.index < 0) continue;
    if (static_cast<size_t>(d.index) >= out->tool_calls.size()) out->tool_calls.resize(d.index + 1);
    ToolCall& call = out->tool_calls[d.index];
    if (!d.id.empty()) call.id = d.id;
    if (!d.name.empty()) call.name = d.name;
    call.arguments += d.arguments;
  }
}

}  // namespace radixserve::tool_calls
