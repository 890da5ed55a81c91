// Chat templates: family detection from template text, and each family's rendering against a
// hand-checked expected string.
#include "core/api/chat_template.h"
#include "core/gguf/gguf_reader.h"

#include <gtest/gtest.h>

namespace radixserve::api {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "S"}, {"user", "hello"}, {"assistant", "response"}, {"user", "again"}};
const std::vector<ChatMessage> kNoSystem = {{"user", "hello"}, {"assistant", "response"}, {"user", "again"}};

std::string Render(ChatTemplateFamily family, const std::vector<ChatMessage>& messages, bool gen = true) {
  Result<std::string> r = ChatTemplate::ForFamily(family, {}).Render(messages, gen);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : "";
}

TEST(ChatTemplateDetect, FromTemplateText) {
  // Abbreviated but characteristic pieces of the real templates.
  EXPECT_EQ(DetectChatTemplateFamily("{{'<|im_start|>' + message['role'] + '\\n'}}"), ChatTemplateFamily::kChatML);
  EXPECT_EQ(DetectChatTemplateFamily("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}"),
            ChatTemplateFamily::kLlama3);
  EXPECT_EQ(DetectChatTemplateFamily("{{ bos_token + '[INST] ' + '<<SYS>>\\n' }}"), ChatTemplateFamily::kLlama2);
  EXPECT_EQ(DetectChatTemplateFamily("{{ bos_token }}{{ '[INST] ' + message['content'] + ' [/INST]' }}"),
            ChatTemplateFamily::kMistral);
  EXPECT_EQ(DetectChatTemplateFamily("{{ '<start_of_turn>' + role + '\\n' }}"), ChatTemplateFamily::kGemma);
  EXPECT_EQ(DetectChatTemplateFamily("{{'<|user|>' + '\\n' + message['content'] + '<|end|>'}}"),
            ChatTemplateFamily::kPhi3);
  EXPECT_EQ(DetectChatTemplateFamily("{{ '<|user|>\\n' + message['content'] + eos_token }}"),
            ChatTemplateFamily::kZephyr);
  EXPECT_EQ(DetectChatTemplateFamily("{{ messages }}"), std::nullopt);
  EXPECT_EQ(DetectChatTemplateFamily(""), std::nullopt);
}

TEST(ChatTemplateDetect, MissingFallsBackToChatMLUnknownIsRefusedByName) {
  EXPECT_EQ(ChatTemplate::FromTemplateText("")->family(), ChatTemplateFamily::kChatML);
  EXPECT_EQ(ChatTemplate::FromTemplateText("<start_of_turn>")->family(), ChatTemplateFamily::kGemma);
  auto unknown = ChatTemplate::FromTemplateText("{% for m in messages %}{{ m.content }}{% endfor %}");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(unknown.status().message().find("\"{% for m in messages %}{{ m.content }}{% endfor %}\""),
            std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("chat_template:=<family>"), std::string::npos);
}

// The templates the reference files and vocabularies carry are recognised.
TEST(ChatTemplateDetect, TheShippedTemplatesAreRecognised) {
  auto phi3 = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/models/ref/models/d_phi3.F32.gguf");
  ASSERT_TRUE(phi3.ok()) << phi3.status().ToString();
  auto text = (*phi3)->GetString("tokenizer.chat_template");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(DetectChatTemplateFamily(*text), ChatTemplateFamily::kPhi3);
}

TEST(ChatTemplateDetect, ByName) {
  for (const char* name : {"chatml", "llama2", "llama3", "mistral", "gemma", "phi3", "zephyr"}) {
    Result<ChatTemplate> t = ChatTemplate::FromFamilyName(name, {});
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(ChatTemplateFamilyName(t->family()), name);
  }
  Result<ChatTemplate> bad = ChatTemplate::FromFamilyName("jinja", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown chat template \"jinja\""), std::string::npos);
}

TEST(ChatTemplateRender, ChatML) {
  EXPECT_EQ(Render(ChatTemplateFamily::kChatML, kConversation),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n"
            "<|im_start|>assistant\nresponse<|im_end|>\n<|im_start|>user\nagain<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(Render(ChatTemplateFamily::kChatML, {{"user", "q"}}, false), "<|im_start|>user\nq<|im_end|>\n");
}

TEST(ChatTemplateRender, Llama2) {
  EXPECT_EQ(Render(ChatTemplateFamily::kLlama2, kConversation),
            "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nhello [/INST] response </s><s>[INST] again [/INST]");
  EXPECT_EQ(Render(ChatTemplateFamily::kLlama2, kNoSystem),
            "<s>[INST] hello [/INST] response </s><s>[INST] again [/INST]");
}

TEST(ChatTemplateRender, Llama3) {
  EXPECT_EQ(Render(ChatTemplateFamily::kLlama3, {{"system", "S"}, {"user", " hello \n"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateRender, Mistral) {
  EXPECT_EQ(Render(ChatTemplateFamily::kMistral, kNoSystem),
            "<s>[INST] hello [/INST]response</s>[INST] again [/INST]");
  // No system role: it joins the first user turn.
  EXPECT_EQ(Render(ChatTemplateFamily::kMistral, kConversation),
            "<s>[INST] S\n\nhello [/INST]response</s>[INST] again [/INST]");
}

TEST(ChatTemplateRender, Gemma) {
  EXPECT_EQ(Render(ChatTemplateFamily::kGemma, kNoSystem),
            "<bos><start_of_turn>user\nhello<end_of_turn>\n<start_of_turn>model\nresponse<end_of_turn>\n"
            "<start_of_turn>user\nagain<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(Render(ChatTemplateFamily::kGemma, {{"system", "S"}, {"user", "hello"}}, false),
            "<bos><start_of_turn>user\nS\n\nhello<end_of_turn>\n");
}

TEST(ChatTemplateRender, Phi3) {
  EXPECT_EQ(Render(ChatTemplateFamily::kPhi3, kConversation),
            "<|system|>\nS<|end|>\n<|user|>\nhello<|end|>\n<|assistant|>\nresponse<|end|>\n"
            "<|user|>\nagain<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplateRender, Zephyr) {
  EXPECT_EQ(Render(ChatTemplateFamily::kZephyr, kConversation),
            "<|system|>\nS</s>\n<|user|>\nhello</s>\n<|assistant|>\nresponse</s>\n<|user|>\nagain</s>\n"
            "<|assistant|>\n");
}

TEST(ChatTemplateRender, CustomSpecialTokensAndErrors) {
  ChatTemplate t = ChatTemplate::ForFamily(ChatTemplateFamily::kZephyr, {"<BOS>", "<|endoftext|>"});
  EXPECT_EQ(t.Render({{"user", "x"}}, true).value(), "<|user|>\nx<|endoftext|>\n<|assistant|>\n");
  EXPECT_FALSE(t.Render({}, true).ok());
  Result<std::string> late_system =
      ChatTemplate::ForFamily(ChatTemplateFamily::kLlama2, {}).Render({{"user", "a"}, {"system", "b"}}, true);
  ASSERT_FALSE(late_system.ok());
  EXPECT_NE(late_system.status().message().find("messages[1]"), std::string::npos);
}

}  // namespace
}  // namespace radixserve::api
