#include "core/tool_calls/call_grammar.h"

#include <optional>

namespace radixserve::tool_calls {
namespace {

using nlohmann::ordered_json;

// A family's call markup. Every call is begin(name) + arguments + end; calls are joined by
// `separator` and the group is wrapped in prefix / suffix. `trigger` starts the group in auto
// mode: it must be where prefix + begin starts (lazy_prefix replaces prefix there).
struct CallMarkup {
  std::string prefix, lazy_prefix, separator, suffix;
  std::string begin_before_name, begin_after_name, end;
  std::string trigger;  // "" : no lazy grammar
  bool single_call = false;  // the syntax holds one call per message
};

std::optional<CallMarkup> MarkupOf(ToolCallFamily family) {
  const std::string json_call = "{\"name\": \"";
  switch (family) {
    case ToolCallFamily::kHermes:
      return CallMarkup{"", "", "\n", "", "<tool_call>\n" + json_call, "\", \"arguments\": ", "}\n</tool_call>",
                        "<tool_call>"};
    case ToolCallFamily::kLlama3:
      // A bare JSON call is the whole answer; after free text only <|python_tag|> opens one.
      return CallMarkup{"", "<|python_tag|>", "; ", "", json_call, "\", \"parameters\": ", "}", "<|python_tag|>"};
    case ToolCallFamily::kMistralNemo:
      return CallMarkup{"[TOOL_CALLS][", "[TOOL_CALLS][", ", ", "]", json_call, "\", \"arguments\": ", "}",
                        "[TOOL_CALLS]"};
    case ToolCallFamily::kMistralSmall:
      return CallMarkup{"", "", "", "", "[TOOL_CALLS]", "[ARGS]", "", "[TOOL_CALLS]"};
    case ToolCallFamily::kFunctionaryV32:
      return CallMarkup{"", "", ">>>", "", "", "\n", "", ""};
    case ToolCallFamily::kFirefunctionV2:
      return CallMarkup{" functools[", "functools[", ", ", "]", json_call, "\", \"arguments\": ", "}", "functools["};
    case ToolCallFamily::kGranite:
      return CallMarkup{"<|tool_call|>[", "<|tool_call|>[", ", ", "]", json_call, "\", \"arguments\": ", "}",
                        "<|tool_call|>"};
    case ToolCallFamily::kCommandR7B:
      return CallMarkup{"<|START_ACTION|>[", "<|START_ACTION|>[", ", ", "]<|END_ACTION|>",
                        "{\"tool_call_id\": \"0\", \"tool_name\": \"", "\", \"parameters\": ", "}",
                        "<|START_ACTION|>"};
    case ToolCallFamily::kGptOss:
      return CallMarkup{"<|channel|>commentary ", "", "", "", "to=functions.", " <|constrain|>json<|message|>",
                        "<|call|>", "to=functions.", true};
    case ToolCallFamily::kDeepSeekR1:
      return CallMarkup{"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁begin｜>", "\n", "<｜tool▁calls▁end｜>",
                        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "\n```json\n", "\n```<｜tool▁call▁end｜>",
                        "<｜tool▁calls▁begin｜>"};
    default:
      return std::nullopt;
  }
}

Result<CallMarkup> MarkupFor(ToolCallFamily family, CallMode mode) {
  std::optional<CallMarkup> m = MarkupOf(family);
  if (!m)
    return Status::Unsupported("the " + std::string(FamilyName(family)) +
                               " tool-call syntax has no grammar (its arguments are not JSON)");
  if (mode == CallMode::kAuto && m->trigger.empty())
    return Status::Unsupported("the " + std::string(FamilyName(family)) +
                               " tool-call syntax has no trigger, so tool_choice auto is not constrained");
  return *m;
}

}  // namespace

Result<std::string> CallGrammarSpec(ToolCallFamily family, const std::vector<CallableTool>& tools,
                                    const CallGrammarOptions& options) {
  RS_ASSIGN_OR_RETURN(CallMarkup m, MarkupFor(family, options.mode));
  if (tools.empty()) return Status::InvalidArgument("no tool to call");
  const bool lazy = options.mode == CallMode::kAuto;
  ordered_json calls = ordered_json::array();
  for (const CallableTool& t : tools) {
    ordered_json call = {{"begin", m.begin_before_name + t.name + m.begin_after_name}};
    // A tool without parameters takes an object (any, as OpenAI reads a missing schema).
    call["schema"] = t.parameters.is_null() ? ordered_json{{"type", "object"}} : t.parameters;
    call["end"] = m.end;
    calls.push_back(std::move(call));
  }
  ordered_json spec = {{"calls", std::move(calls)},
                       {"prefix", lazy ? m.lazy_prefix : m.prefix},
                       {"separator", m.separator},
                       {"suffix", m.suffix},
                       {"min_calls", 1},
                       {"max_calls", options.parallel && !m.single_call ? -1 : 1},
                       {"max_whitespace", options.max_whitespace}};
  if (lazy) spec["trigger"] = m.trigger;
  return spec.dump();
}

Result<std::string> RenderCallForTest(ToolCallFamily family, const std::string& name, const std::string& arguments,
                                      CallMode mode) {
  RS_ASSIGN_OR_RETURN(CallMarkup m, MarkupFor(family, mode));
  return (mode == CallMode::kAuto ? m.lazy_prefix : m.prefix) + m.begin_before_name + name + m.begin_after_name +
         arguments + m.end + m.suffix;
}

}  // namespace radixserve::tool_calls
