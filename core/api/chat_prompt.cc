#include "core/api/chat_prompt.h"

namespace radixserve::api {

namespace {
constexpr const char* kReserved[] = {"messages", "add_generation_prompt", "bos_token", "eos_token", "tools"};
}  // namespace

bool IsReservedTemplateVariable(std::string_view name) {
  for (const char* r : kReserved)
    if (name == r) return true;
  return false;
}

Result<ChatPromptTemplate> ChatPromptTemplate::FromJinja(std::string_view source, std::string origin, Tokens tokens) {
  Result<jinja::Template> t = jinja::Template::Parse(source);
  if (!t.ok())
    return Status(t.status().code(), "the chat template (" + origin + ") cannot be used: " + t.status().message());
  ChatPromptTemplate out;
  out.jinja_ = std::make_shared<const jinja::Template>(std::move(t).value());
  out.origin_ = std::move(origin);
  out.tokens_ = std::move(tokens);
  out.tool_family_ = tool_calls::FamilyOfTemplate(source);
  return out;
}

ChatPromptTemplate ChatPromptTemplate::FromFamily(ChatTemplate family) {
  ChatPromptTemplate out;
  out.family_.emplace(std::move(family));
  return out;
}

nlohmann::ordered_json TemplateMessage(const ChatMessage& m) {
  nlohmann::ordered_json j = {{"role", m.role}};
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) j["name"] = m.name;
  j["content"] = m.content_null ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.content);
  if (!m.tool_calls.empty()) {
    nlohmann::ordered_json calls = nlohmann::ordered_json::array();
    for (const ChatToolCall& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

Result<std::string> ChatPromptTemplate::Render(const std::vector<ChatMessage>& messages,
                                               const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                               const nlohmann::ordered_json& kwargs,
                                               std::chrono::system_clock::time_point now) const {
  if (family_) return family_->Render(messages, add_generation_prompt);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) list.push_back(TemplateMessage(m));
  return RenderJson(list, tools, add_generation_prompt, kwargs, now);
}

Result<std::string> ChatPromptTemplate::RenderJson(const nlohmann::ordered_json& messages,
                                                   const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                                   const nlohmann::ordered_json& kwargs,
                                                   std::chrono::system_clock::time_point now) const {
  if (family_) {
    std::vector<ChatMessage> plain;
    for (const auto& m : messages) {
      ChatMessage c;
      if (m.is_object() && m.contains("role") && m["role"].is_string()) c.role = m["role"].get<std::string>();
      if (m.is_object() && m.contains("content") && m["content"].is_string()) c.content = m["content"].get<std::string>();
      plain.push_back(std::move(c));
    }
    return family_->Render(plain, add_generation_prompt);
  }
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  if (!tools.is_null()) context["tools"] = tools;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = tokens_.bos_token;
  context["eos_token"] = tokens_.eos_token;
  if (kwargs.is_object())
    for (const auto& [key, value] : kwargs.items()) context[key] = value;
  jinja::RenderOptions options;
  options.now = now;
  Result<std::string> text = jinja_->Render(context, options);
  if (text.ok()) return text;
  // raise_exception carries the template's own words; other failures are the engine's.
  const StatusCode code = text.status().code();
  const std::string what = code == StatusCode::kInvalidArgument      ? "the chat template raised: "
                           : code == StatusCode::kResourceExhausted ? "the chat template passed a limit: "
                                                                     : "the chat template failed: ";
  return Status::InvalidArgument(what + text.status().message());
}

std::string ChatPromptTemplate::Describe() const {
  if (family_) return "family " + std::string(ChatTemplateFamilyName(family_->family()));
  return "jinja (" + origin_ + ")";
}

}  // namespace radixserve::api
