#include "core/api/chat_request.h"

#include <glog/logging.h>

#include "core/api/response_format.h"
#include "core/api/tool_request.h"
#include "core/tool_calls/call_grammar.h"

namespace radixserve::api {
namespace {

using nlohmann::ordered_json;
using tool_calls::ToolCallFamily;

bool HasToolMessages(const std::vector<ChatMessage>& messages) {
  for (const ChatMessage& m : messages)
    if (m.role == "tool" || !m.tool_calls.empty()) return true;
  return false;
}

std::string SupportedFamilies() {
  std::string out;
  for (ToolCallFamily f : tool_calls::AllFamilies()) {
    if (f == ToolCallFamily::kNone) continue;
    if (!out.empty()) out += ", ";
    out += tool_calls::FamilyName(f);
  }
  return out;
}

// "calls[i].schema<rest>: why" from the structural compiler, said of the tool it came from.
ApiError ParametersError(const std::vector<size_t>& tool_index, const Status& status) {
  const std::string& msg = status.message();
  std::string param = "tools";
  std::string rest = msg;
  if (msg.rfind("calls[", 0) == 0) {
    const size_t close = msg.find(']');
    const size_t call = std::strtoul(msg.c_str() + 6, nullptr, 10);
    if (close != std::string::npos && call < tool_index.size()) {
      std::string tail = msg.substr(close + 1);  // ".schema/properties/x: why"
      const size_t colon = tail.find(": ");
      std::string where = colon == std::string::npos ? "" : tail.substr(0, colon);
      if (where.rfind(".schema", 0) == 0) where = ".function.parameters" + where.substr(7);
      param = "tools[" + std::to_string(tool_index[call]) + "]" + where;
      rest = colon == std::string::npos ? tail : tail.substr(colon + 2);
    }
  }
  ApiError e = ApiError::FromStatus(status, param);
  if (e.http_status < 500) e = ApiError::BadRequest(param, param + ": " + rest);
  return e;
}

// The grammar of the request's calls, or none (a family without one: logged).
bool ConstrainCalls(ToolCallFamily family, const ApiLimits& limits, GenerateRequest* req, ApiError* error) {
  if (req->spec.grammar.active()) {
    *error = ApiError::BadRequest("response_format",
                                  "response_format: a constrained output cannot be combined with tools that may be "
                                  "called (use tool_choice \"none\", or describe the answer as a tool)");
    return false;
  }
  std::vector<tool_calls::CallableTool> tools;
  std::vector<size_t> tool_index;
  for (const std::string& name : CallableToolNames(*req)) {
    for (size_t i = 0; i < req->tools.size(); ++i) {
      const ordered_json& fn = req->tools[i]["function"];
      if (fn["name"] != name) continue;
      tools.push_back({name, fn.contains("parameters") ? fn["parameters"] : ordered_json(nullptr)});
      tool_index.push_back(i);
    }
  }
  tool_calls::CallGrammarOptions options;
  options.mode = req->tool_choice.mode == ToolChoice::Mode::kRequired ? tool_calls::CallMode::kRequired
                                                                      : tool_calls::CallMode::kAuto;
  options.parallel = req->parallel_tool_calls;
  Result<std::string> spec = tool_calls::CallGrammarSpec(family, tools, options);
  if (!spec.ok()) {
    LOG_FIRST_N(WARNING, 4) << "tool calls are parsed but not constrained: " << spec.status().message();
    return true;
  }
  grammar::GrammarSpec g{grammar::GrammarKind::kStructural, std::move(spec).value()};
  if (g.text.size() > limits.grammar.max_source_bytes) {
    *error = ApiError::BadRequest("tools", "tools: the tools' parameter schemas take " + std::to_string(g.text.size()) +
                                               " bytes, more than the " +
                                               std::to_string(limits.grammar.max_source_bytes) + " a grammar may");
    return false;
  }
  if (Status s = CompileToValidate(g, limits.grammar); !s.ok()) {
    *error = ParametersError(tool_index, s);
    return false;
  }
  req->spec.grammar = std::move(g);
  return true;
}

}  // namespace

bool PrepareChat(const ChatPromptTemplate& chat_template, const ApiLimits& limits, GenerateRequest* req,
                 ApiError* error) {
  const ToolCallFamily family = chat_template.tool_family();
  const bool has_tools = req->tools.is_array() && !req->tools.empty();
  const bool calls_allowed = has_tools && req->tool_choice.mode != ToolChoice::Mode::kNone;
  if ((calls_allowed || HasToolMessages(req->messages)) && family == ToolCallFamily::kNone) {
    const std::string field = calls_allowed ? "tools" : "messages";
    *error = ApiError::BadRequest(
        field, field + ": the chat template (" + chat_template.Describe() +
                   ") writes no tool-call syntax radixserve knows, so it cannot be given tools or tool calls; "
                   "serve the model with a template of a supported family (" +
                   SupportedFamilies() + "): chat_template:=FILE");
    return false;
  }
  Result<std::string> prompt = chat_template.Render(req->messages, calls_allowed ? req->tools : ordered_json(nullptr),
                                                    req->add_generation_prompt, req->chat_template_kwargs);
  if (!prompt.ok()) {
    *error = ApiError::BadRequest("messages", prompt.status().message());
    return false;
  }
  req->text = std::move(prompt).value();
  req->has_text = true;
  req->output_family = family;
  req->output_starts_in_reasoning = tool_calls::PromptEndsInReasoning(family, req->text);
  // Markup may be control tokens; the output parser removes it from what the client sees.
  if (family != ToolCallFamily::kNone && req->skip_special_tokens_default)
    req->spec.sampling.skip_special_tokens = false;
  return !calls_allowed || (ConstrainCalls(family, limits, req, error) && CheckConstrainedSampling(*req, error));
}

}  // namespace radixserve::api
