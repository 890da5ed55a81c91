// ChatTemplate: renders chat messages into a prompt string for one of the
// common template families, without a Jinja engine.
//
// The family is recognised from the GGUF's tokenizer.chat_template text by
// its marker tokens, or chosen by name. A missing template falls back to
// ChatML with a warning; a template of no known family is an error that names
// it (rendering it as another family would give the model a prompt it was
// never trained on). Rendered text contains the family's special
// tokens (including BOS where the family's template writes it), so the result
// is tokenized with special-token parsing on and without adding BOS again.
// Immutable after construction; Render is safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/generate_request.h"
#include "core/util/status.h"

namespace radixserve::api {

enum class ChatTemplateFamily { kChatML, kLlama2, kLlama3, kMistral, kGemma, kPhi3, kZephyr };

// "chatml", "llama2", "llama3", "mistral", "gemma", "phi3", "zephyr".
std::string_view ChatTemplateFamilyName(ChatTemplateFamily family);
std::optional<ChatTemplateFamily> ChatTemplateFamilyFromName(std::string_view name);
// Recognises the family from template text; nullopt when no family's markers are present.
std::optional<ChatTemplateFamily> DetectChatTemplateFamily(std::string_view template_text);

class ChatTemplate {
 public:
  struct Options {
    std::string bos_token;  // empty: the family's usual BOS ("<s>", "<|begin_of_text|>", "<bos>")
    std::string eos_token;  // empty: the family's usual EOS ("</s>")
  };

  // From the GGUF's template text: ChatML with a LOG(WARNING) when it is empty, Unsupported
  // (quoting the template's start) when no family's markers are in it.
  static Result<ChatTemplate> FromTemplateText(std::string_view template_text, Options options);
  static Result<ChatTemplate> FromTemplateText(std::string_view template_text) {
    return FromTemplateText(template_text, {});
  }
  // From a family name given by the operator (--chat-template); InvalidArgument for an unknown name.
  static Result<ChatTemplate> FromFamilyName(std::string_view name, Options options);
  static ChatTemplate ForFamily(ChatTemplateFamily family, Options options);

  ChatTemplateFamily family() const { return family_; }

  // Renders messages; with add_generation_prompt, appends the opening of an assistant turn.
  // InvalidArgument for an empty list or a role the renderer cannot place.
  Result<std::string> Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

 private:
  ChatTemplate(ChatTemplateFamily family, Options options);

  ChatTemplateFamily family_;
  Options options_;
};

}  // namespace radixserve::api
