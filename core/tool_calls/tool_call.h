// The results of parsing a chat model's generated text: tool calls, reasoning and content, whole
// (ParsedOutput) or as the pieces a stream delivers (OutputDelta), in the shape of the OpenAI chat
// API (message.content, message.reasoning_content, message.tool_calls[].function).
//
// Plain value types.
#pragma once

#include <string>
#include <vector>

namespace radixserve::tool_calls {

// One function call the model made.
struct ToolCall {
  std::string id;         // "" when the format carries none (the server makes one up)
  std::string name;
  std::string arguments;  // a JSON object text (see output_parser.h for calls cut short)

  bool operator==(const ToolCall&) const = default;
};

// The next piece of one call in a stream: OpenAI's delta.tool_calls[i].
struct ToolCallDelta {
  int index = 0;          // the call's position among this output's calls (0, 1, ...)
  std::string id;         // set once, in the first delta of the call, or (formats that write the id
                          // after the arguments: Mistral Nemo) in a later one
  std::string name;       // set once, in the first delta of the call
  std::string arguments;  // the next fragment of the arguments text

  bool operator==(const ToolCallDelta&) const = default;
};

// What one Feed or Finish made certain. Within one delta, the order between content, reasoning and
// calls is not kept; across deltas everything arrives in output order.
struct OutputDelta {
  std::string content;
  std::string reasoning;
  std::vector<ToolCallDelta> calls;

  bool empty() const { return content.empty() && reasoning.empty() && calls.empty(); }
};

// A whole output: the concatenation of every delta of a stream.
struct ParsedOutput {
  std::string content;
  std::string reasoning;
  std::vector<ToolCall> tool_calls;

  bool operator==(const ParsedOutput&) const = default;
};

// Adds `delta` to `out` the way a streaming client assembles a message: text appended, a call's
// first delta opening it, later fragments appended to its arguments.
void AppendDelta(const OutputDelta& delta, ParsedOutput* out);

}  // namespace radixserve::tool_calls
