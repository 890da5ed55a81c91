// ToolCallFamily: the tool-call syntaxes we parse, one per family of chat models, and the one table
// that says, for each, its name, the literals that start a call and its reasoning markers.
//
// The syntax of a family is the one its chat template writes for a past assistant turn with
// tool_calls (that is what the model was trained to generate); the comment on each value is that
// syntax as the templates in shared/templates render it. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/util/status.h"

namespace radixserve::tool_calls {

enum class ToolCallFamily : uint8_t {
  kNone,            // no known tool-call syntax: everything is content
  kHermes,          // Hermes 2 Pro / 3, Qwen2.5, QwQ:
                    //   <tool_call>\n{"name": N, "arguments": {...}}\n</tool_call>, one block per call
  kQwen3Coder,      // Qwen3-Coder, Qwen3.5: <tool_call>\n<function=N>\n<parameter=P>\nraw value\n</parameter>\n
                    //   </function>\n</tool_call>, one block per call
  kLlama3,          // Llama 3.1 / 3.2 / 3.3: {"name": N, "parameters": {...}} as the whole answer,
                    //   optionally after <|python_tag|>; calls separated by ";" are accepted
  kMistralNemo,     // [TOOL_CALLS][{"name": N, "arguments": {...}, "id": "9 chars"}, ...]
  kMistralSmall,    // Mistral Small 3.2: [TOOL_CALLS]N[CALL_ID]ID[ARGS]{...} per call;
                    //   Ministral 3: [TOOL_CALLS]N[ARGS]{...}, reasoning [THINK]...[/THINK]
  kFunctionaryV32,  // the prompt ends with ">>>"; then N\n{...} per call and all\ntext for content,
                    //   each further message after another ">>>"
  kFirefunctionV2,  // " functools[{"name": N, "arguments": {...}}, ...]" (no closing marker)
  kGranite,         // <|tool_call|>[{"name": N, "arguments": {...}}, ...]; <think>/<response> wrappers
  kCommandR7B,      // <|START_THINKING|>...<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0",
                    //   "tool_name": N, "parameters": {...}}, ...]<|END_ACTION|>; text in
                    //   <|START_RESPONSE|>...<|END_RESPONSE|>
  kGptOss,          // harmony: <|channel|>analysis<|message|>...<|end|> (reasoning),
                    //   <|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json
                    //   <|message|>{...}<|call|> (a call), <|channel|>final<|message|>... (content)
  kDeepSeekR1,      // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N\n```json\n{...}\n```
                    //   <｜tool▁call▁end｜> (more calls after "\n") <｜tool▁calls▁end｜>
  kGemma4,          // <|tool_call>call:N{key:<|"|>text<|"|>,n:3,flag:true}<tool_call|> per call;
                    //   reasoning <|channel>thought\n...<channel|>
  kMiniCpm5,        // <function name="N"><param name="P">value</param>...</function>, calls separated by
                    //   "\n"; a value holding <, & or a newline is wrapped in <![CDATA[...]]>
};

// What the rest of the engine needs to know about a family's syntax.
struct FamilySyntax {
  ToolCallFamily family;
  std::string_view name;  // stable identifier ("hermes", "qwen3_coder", ...), for configs and logs
  // Literals whose appearance in the output starts call markup (for lazy grammars: constrain from
  // here). Empty for kNone.
  std::vector<std::string_view> call_triggers;
  // The output may also open with a call and no trigger: Llama 3's bare JSON object, functionary's
  // recipient line (its ">>>" is the end of the prompt).
  bool call_can_open_output = false;
  // The reasoning block at the start of the output ("" when the family has none). A prompt may end
  // inside it (after the begin marker): the parser's starts_in_reasoning flag.
  std::string_view reasoning_begin;
  std::string_view reasoning_end;
};

// The table row of `family`.
const FamilySyntax& SyntaxOf(ToolCallFamily family);
// Every family, kNone first.
const std::vector<ToolCallFamily>& AllFamilies();
std::string_view FamilyName(ToolCallFamily family);
// The family named `name` (as FamilyName spells it).
Result<ToolCallFamily> FamilyFromName(std::string_view name);

// Whether a rendered prompt ends inside the family's reasoning block: its last reasoning_begin is
// followed by nothing but whitespace (Qwen3.5's generation prompt ends with "<think>\n"). This is
// the parser's starts_in_reasoning.
bool PromptEndsInReasoning(ToolCallFamily family, std::string_view rendered_prompt);

// The family whose call syntax the chat template writes, from markers in the template's source
// ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|START_ACTION|>", "<|channel|>", ...);
// kNone when it writes no syntax we know.
ToolCallFamily FamilyOfTemplate(std::string_view chat_template_source);

}  // namespace radixserve::tool_calls
