#include "core/tool_calls/family.h"

#include <string>

namespace radixserve::tool_calls {
namespace {

using F = ToolCallFamily;

const std::vector<FamilySyntax>& Table() {
  // Indexed by the enum's value.
  static const std::vector<FamilySyntax> table = {
      {F::kNone, "none", {}, false, "", ""},
      {F::kHermes, "hermes", {"<tool_call>"}, false, "<think>", "</think>"},
      {F::kQwen3Coder, "qwen3_coder", {"<tool_call>"}, false, "<think>", "</think>"},
      {F::kLlama3, "llama3", {"<|python_tag|>"}, true, "", ""},
      {F::kMistralNemo, "mistral_nemo", {"[TOOL_CALLS]"}, false, "", ""},
      {F::kMistralSmall, "mistral_small", {"[TOOL_CALLS]"}, false, "[THINK]", "[/THINK]"},
      {F::kFunctionaryV32, "functionary_v3_2", {">>>"}, true, "", ""},
      {F::kFirefunctionV2, "firefunction_v2", {"functools["}, false, "", ""},
      {F::kGranite, "granite", {"<|tool_call|>"}, false, "<think>", "</think>"},
      {F::kCommandR7B, "command_r7b", {"<|START_ACTION|>"}, false, "<|START_THINKING|>", "<|END_THINKING|>"},
      {F::kGptOss, "gpt_oss", {"to=functions."}, false, "<|channel|>analysis<|message|>", "<|end|>"},
      {F::kDeepSeekR1, "deepseek_r1", {"<｜tool▁calls▁begin｜>"}, false, "<think>", "</think>"},
      {F::kGemma4, "gemma4", {"<|tool_call>"}, false, "<|channel>thought", "<channel|>"},
      {F::kMiniCpm5, "minicpm5", {"<function name=\""}, false, "<think>", "</think>"},
  };
  return table;
}

bool Has(std::string_view text, std::string_view marker) { return text.find(marker) != std::string_view::npos; }

}  // namespace

const FamilySyntax& SyntaxOf(ToolCallFamily family) {
  const auto& table = Table();
  size_t i = static_cast<size_t>(family);
  return i < table.size() ? table[i] : table[0];
}

const std::vector<ToolCallFamily>& AllFamilies() {
  static const std::vector<ToolCallFamily> all = [] {
    std::vector<ToolCallFamily> v;
    for (const FamilySyntax& s : Table()) v.push_back(s.family);
    return v;
  }();
  return all;
}

std::string_view FamilyName(ToolCallFamily family) { return SyntaxOf(family).name; }

Result<ToolCallFamily> FamilyFromName(std::string_view name) {
  for (const FamilySyntax& s : Table()) {
    if (s.name == name) return s.family;
  }
  return Status::InvalidArgument("unknown tool-call family \"" + std::string(name) + "\"");
}

bool PromptEndsInReasoning(ToolCallFamily family, std::string_view prompt) {
  std::string_view begin = SyntaxOf(family).reasoning_begin;
  if (begin.empty()) return false;
  size_t at = prompt.rfind(begin);
  return at != std::string_view::npos &&
         prompt.find_first_not_of(" \t\r\n", at + begin.size()) == std::string_view::npos;
}

ToolCallFamily FamilyOfTemplate(std::string_view src) {
  // Most specific markers first: Qwen3-Coder's templates also contain "<tool_call>", Granite's
  // "<|tool_call|>" is not Gemma 4's "<|tool_call>", and functionary and firefunction are Llama 3
  // fine-tunes whose templates keep Llama's header tokens.
  if (Has(src, "<|channel|>")) return F::kGptOss;
  if (Has(src, "<|START_ACTION|>")) return F::kCommandR7B;
  if (Has(src, "<｜tool▁calls▁begin｜>")) return F::kDeepSeekR1;
  if (Has(src, "<|tool_call>")) return F::kGemma4;
  if (Has(src, "[TOOL_CALLS]")) return Has(src, "[ARGS]") ? F::kMistralSmall : F::kMistralNemo;
  if (Has(src, "<function=") && Has(src, "<parameter=")) return F::kQwen3Coder;
  if (Has(src, "<tool_call>")) return F::kHermes;
  if (Has(src, "<function name=") && Has(src, "<param name=")) return F::kMiniCpm5;
  if (Has(src, "<|tool_call|>")) return F::kGranite;
  if (Has(src, "functools[")) return F::kFirefunctionV2;
  if (Has(src, ">>>all")) return F::kFunctionaryV32;
  if (Has(src, "<|python_tag|>") || (Has(src, "ipython") && Has(src, "\"parameters\""))) return F::kLlama3;
  return F::kNone;
}

}  // namespace radixserve::tool_calls
