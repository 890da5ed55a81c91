// ChatPromptTemplate: how a chat request's messages become the model's prompt.
//
// The model's own chat template (Jinja: the GGUF's tokenizer.chat_template, or a file the
// operator names with chat_template:=FILE) rendered by core/jinja as Python jinja2 renders it for
// Hugging Face transformers; or, for a file that carries no template, a hand-written family
// (ChatTemplate: ChatML by default, or the family the operator names). The Jinja context is
// messages, add_generation_prompt, bos_token / eos_token (the vocabulary's), strftime_now (the
// real time) and the request's chat_template_kwargs.
//
// Errors: a template that raises (raise_exception) or fails for a request's messages is an
// InvalidArgument whose message says so (a 400); the render is bounded by jinja::RenderLimits.
// Immutable after construction; Render is safe from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/chat_template.h"
#include "core/api/generate_request.h"
#include "core/jinja/template.h"
#include "core/tool_calls/family.h"
#include "core/util/status.h"

namespace radixserve::api {

class ChatPromptTemplate {
 public:
  struct Tokens {
    std::string bos_token;  // the vocabulary's BOS and EOS text ("" when it has none)
    std::string eos_token;
  };
  // A Jinja template; `origin` names it in errors and logs ("the GGUF's tokenizer.chat_template",
  // a file's path). Parse errors and unsupported constructs name the template line.
  static Result<ChatPromptTemplate> FromJinja(std::string_view source, std::string origin, Tokens tokens);
  // A hand-written family.
  static ChatPromptTemplate FromFamily(ChatTemplate family);

  // The prompt for `messages` (assistant tool_calls and tool messages in OpenAI's shape, arguments
  // as objects) and `tools` (an array, or null: the template sees no `tools`). `kwargs` (an object
  // or null): extra template variables, as the request's chat_template_kwargs; `now` is what
  // strftime_now formats. A hand-written family renders role and content only.
  Result<std::string> Render(const std::vector<ChatMessage>& messages, const nlohmann::ordered_json& tools,
                             bool add_generation_prompt, const nlohmann::ordered_json& kwargs,
                             std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

  // The same from messages as JSON, passed to a Jinja template as they are (a hand-written
  // family reads role and content only), with `tools` (an array, or null for none: the template
  // then sees no `tools` variable). What `radixserve template` renders.
  Result<std::string> RenderJson(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                 bool add_generation_prompt, const nlohmann::ordered_json& kwargs,
                                 std::chrono::system_clock::time_point now) const;

  // "jinja (<origin>)" or "family <name>", for logs and /get_server_info.
  std::string Describe() const;
  bool is_jinja() const { return jinja_ != nullptr; }
  // The tool-call syntax the template writes (tool_calls::FamilyOfTemplate); kNone for a
  // hand-written family, which renders no tools.
  tool_calls::ToolCallFamily tool_family() const { return tool_family_; }

 private:
  ChatPromptTemplate() = default;

  std::shared_ptr<const jinja::Template> jinja_;
  std::string origin_;
  Tokens tokens_;
  std::optional<ChatTemplate> family_;
  tool_calls::ToolCallFamily tool_family_ = tool_calls::ToolCallFamily::kNone;
};

// A chat message as a Jinja template sees it (OpenAI's shape: role, content or null, tool_calls
// with arguments as objects, tool_call_id, name).
nlohmann::ordered_json TemplateMessage(const ChatMessage& message);

// The names a request's chat_template_kwargs may not set (the server sets them).
bool IsReservedTemplateVariable(std::string_view name);

}  // namespace radixserve::api
