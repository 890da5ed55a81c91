#include "core/api/chat_template.h"

#include <glog/logging.h>

namespace radixserve::api {
namespace {

constexpr std::string_view kWhitespace = " \t\n\r";

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kWhitespace);
  return s.substr(b, e - b + 1);
}

bool Contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

// Families without a system role fold a leading system message into the first user turn.
Status FoldSystemIntoFirstUser(const std::vector<ChatMessage>& in, std::string_view separator,
                               std::vector<ChatMessage>* out, std::string* system) {
  size_t start = 0;
  if (!in.empty() && in[0].role == "system") {
    *system = in[0].content;
    start = 1;
  }
  for (size_t i = start; i < in.size(); ++i) {
    if (in[i].role == "system")
      return Status::InvalidArgument("messages[" + std::to_string(i) +
                                     "]: this chat template accepts a system message only as the first message");
    out->push_back(in[i]);
  }
  if (!system->empty() && !out->empty() && (*out)[0].role == "user") {
    (*out)[0].content = *system + std::string(separator) + (*out)[0].content;
    system->clear();
  }
  return Status::Ok();
}

}  // namespace

std::string_view ChatTemplateFamilyName(ChatTemplateFamily family) {
  switch (family) {
    case ChatTemplateFamily::kChatML: return "chatml";
    case ChatTemplateFamily::kLlama2: return "llama2";
    case ChatTemplateFamily::kLlama3: return "llama3";
    case ChatTemplateFamily::kMistral: return "mistral";
    case ChatTemplateFamily::kGemma: return "gemma";
    case ChatTemplateFamily::kPhi3: return "phi3";
    case ChatTemplateFamily::kZephyr: return "zephyr";
  }
  return "chatml";
}

std::optional<ChatTemplateFamily> ChatTemplateFamilyFromName(std::string_view name) {
  for (auto f : {ChatTemplateFamily::kChatML, ChatTemplateFamily::kLlama2, ChatTemplateFamily::kLlama3,
                 ChatTemplateFamily::kMistral, ChatTemplateFamily::kGemma, ChatTemplateFamily::kPhi3,
                 ChatTemplateFamily::kZephyr})
    if (ChatTemplateFamilyName(f) == name) return f;
  return std::nullopt;
}

std::optional<ChatTemplateFamily> DetectChatTemplateFamily(std::string_view t) {
  // Order matters: the most specific markers first (Phi-3 and Zephyr share <|user|>).
  if (Contains(t, "<|im_start|>")) return ChatTemplateFamily::kChatML;
  if (Contains(t, "<|start_header_id|>")) return ChatTemplateFamily::kLlama3;
  if (Contains(t, "<start_of_turn>")) return ChatTemplateFamily::kGemma;
  if (Contains(t, "[INST]")) return Contains(t, "<<SYS>>") ? ChatTemplateFamily::kLlama2 : ChatTemplateFamily::kMistral;
  if (Contains(t, "<|user|>")) return Contains(t, "<|end|>") ? ChatTemplateFamily::kPhi3 : ChatTemplateFamily::kZephyr;
  return std::nullopt;
}

ChatTemplate::ChatTemplate(ChatTemplateFamily family, Options options) : family_(family), options_(std::move(options)) {
  if (options_.bos_token.empty()) {
    options_.bos_token = family == ChatTemplateFamily::kLlama3 ? "<|begin_of_text|>"
                         : family == ChatTemplateFamily::kGemma ? "<bos>"
                                                                : "<s>";
  }
  if (options_.eos_token.empty()) options_.eos_token = "</s>";
}

ChatTemplate ChatTemplate::ForFamily(ChatTemplateFamily family, Options options) {
  return ChatTemplate(family, std::move(options));
}

Result<ChatTemplate> ChatTemplate::FromTemplateText(std::string_view template_text, Options options) {
  std::optional<ChatTemplateFamily> family = DetectChatTemplateFamily(template_text);
  if (!family && template_text.empty()) {
    LOG(WARNING) << "the model has no chat template; using ChatML (choose another with chat_template:=<family>)";
    family = ChatTemplateFamily::kChatML;
  }
  if (!family) {
    constexpr size_t kQuoted = 100;
    std::string start(template_text.substr(0, kQuoted));
    for (char& c : start)
      if (c == '\n') c = ' ';
    return Status::Unsupported("the model's chat template is not one of the families this server renders (chatml, "
                               "llama2, llama3, mistral, gemma, phi3, zephyr): \"" + start +
                               (template_text.size() > kQuoted ? "...\"" : "\"") +
                               "; choose a family with chat_template:=<family>, or use /v1/completions");
  }
  return ChatTemplate(*family, std::move(options));
}

Result<ChatTemplate> ChatTemplate::FromFamilyName(std::string_view name, Options options) {
  std::optional<ChatTemplateFamily> family = ChatTemplateFamilyFromName(name);
  if (!family)
    return Status::InvalidArgument("unknown chat template \"" + std::string(name) +
                                   "\", expected one of chatml, llama2, llama3, mistral, gemma, phi3, zephyr");
  return ChatTemplate(*family, std::move(options));
}

Result<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  if (messages.empty()) return Status::InvalidArgument("messages: must contain at least one message");
  const std::string& bos = options_.bos_token;
  const std::string& eos = options_.eos_token;
  std::string out;
  switch (family_) {
    case ChatTemplateFamily::kChatML:
      for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
    case ChatTemplateFamily::kLlama3:
      out += bos;
      for (const ChatMessage& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + std::string(Trim(m.content)) + "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatTemplateFamily::kLlama2: {
      // <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s>; no generation prompt.
      std::string system;
      size_t start = 0;
      if (messages[0].role == "system") {
        system = messages[0].content;
        start = 1;
      }
      for (size_t i = start; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "system")
          return Status::InvalidArgument("messages[" + std::to_string(i) +
                                         "]: this chat template accepts a system message only as the first message");
        std::string content(Trim(m.content));
        if (i == start && !system.empty()) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
        if (m.role == "user") out += bos + "[INST] " + content + " [/INST]";
        else out += " " + content + " " + eos;
      }
      if (start == messages.size()) out += bos + "[INST] <<SYS>>\n" + system + "\n<</SYS>>\n\n [/INST]";
      break;
    }
    case ChatTemplateFamily::kMistral: {
      // <s>[INST] {user} [/INST]{assistant}</s>[INST] ...; a system message joins the first user turn.
      std::vector<ChatMessage> turns;
      std::string system;
      RS_RETURN_IF_ERROR(FoldSystemIntoFirstUser(messages, "\n\n", &turns, &system));
      out += bos;
      if (!system.empty()) out += "[INST] " + system + " [/INST]";
      for (const ChatMessage& m : turns) {
        if (m.role == "user") out += "[INST] " + m.content + " [/INST]";
        else out += m.content + eos;
      }
      break;
    }
    case ChatTemplateFamily::kGemma: {
      // <bos><start_of_turn>user\n{user}<end_of_turn>\n<start_of_turn>model\n...; no system role.
      std::vector<ChatMessage> turns;
      std::string system;
      RS_RETURN_IF_ERROR(FoldSystemIntoFirstUser(messages, "\n\n", &turns, &system));
      out += bos;
      if (!system.empty()) out += "<start_of_turn>user\n" + std::string(Trim(system)) + "<end_of_turn>\n";
      for (const ChatMessage& m : turns)
        out += "<start_of_turn>" + std::string(m.role == "assistant" ? "model" : "user") + "\n" +
               std::string(Trim(m.content)) + "<end_of_turn>\n";
      if (add_generation_prompt) out += "<start_of_turn>model\n";
      break;
    }
    case ChatTemplateFamily::kPhi3:
      for (const ChatMessage& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    case ChatTemplateFamily::kZephyr:
      for (const ChatMessage& m : messages) out += "<|" + m.role + "|>\n" + m.content + eos + "\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
  }
  return out;
}

}  // namespace radixserve::api
