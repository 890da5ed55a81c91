#include "core/api/chat_output.h"

#include "core/tool_calls/call_id.h"

namespace radixserve::api {

using nlohmann::json;

ChatOutput::ChatOutput(tool_calls::ToolCallFamily family, bool starts_in_reasoning)
    : family_(family), parser_(tool_calls::MakeOutputParser(family, starts_in_reasoning)) {}

tool_calls::OutputDelta ChatOutput::Feed(std::string_view text) { return Number(parser_->Feed(text)); }

tool_calls::OutputDelta ChatOutput::Finish(bool cut_by_length) { return Number(parser_->Finish(cut_by_length)); }

tool_calls::OutputDelta ChatOutput::Number(tool_calls::OutputDelta delta) {
  for (tool_calls::ToolCallDelta& c : delta.calls) {
    // A call's first delta names it; it gets the server's id. Ids the model writes are dropped.
    c.id = c.name.empty() ? "" : tool_calls::NewToolCallId(family_);
  }
  tool_calls::AppendDelta(delta, &message_);
  return delta;
}

json ChatMessageJson(const tool_calls::ParsedOutput& m) {
  json j = {{"role", "assistant"}};
  j["content"] = m.content.empty() && !m.tool_calls.empty() ? json(nullptr) : json(m.content);
  if (!m.reasoning.empty()) j["reasoning_content"] = m.reasoning;
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const tool_calls::ToolCall& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

json ChatDeltaJson(const tool_calls::OutputDelta& d) {
  json j = json::object();
  if (!d.reasoning.empty()) j["reasoning_content"] = d.reasoning;
  if (!d.content.empty()) j["content"] = d.content;
  if (!d.calls.empty()) {
    json calls = json::array();
    for (const tool_calls::ToolCallDelta& c : d.calls) {
      json call = {{"index", c.index}};
      json fn = json::object();
      if (!c.name.empty()) {
        call["id"] = c.id;
        call["type"] = "function";
        fn["name"] = c.name;
      }
      fn["arguments"] = c.arguments;
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

}  // namespace radixserve::api
