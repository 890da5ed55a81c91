// OutputParser: turns a chat model's generated text into content, reasoning and tool calls, as the
// text streams in. One implementation per tool-call family (family.h), all behind this interface.
//
// Streaming. Feed returns only what is certain: text that may be the beginning of markup (a
// partial "<tool_call" at the end of a piece) is held back until the next piece or Finish decides.
// The concatenation of all deltas never depends on how the text was cut into pieces (every split is
// tested, down to one byte per Feed); fed whole UTF-8 characters, every delta holds whole
// characters. A call's name comes in its first delta; its arguments come in fragments as they are
// generated: formats that write JSON arguments pass the model's bytes on as they arrive, Gemma's
// syntax is rewritten into JSON as it arrives, and XML parameters are passed on one by one, each
// once it is complete (its type depends on all of it).
//
// What the client sees:
//   - Markup never appears in content or reasoning, and neither does the whitespace that only
//     separates text from markup (text_channel.h has the exact rule). An output without markup is
//     content unchanged.
//   - Reasoning is the family's reasoning block at the start of the output (<think>...</think> and
//     the like; gpt-oss: its analysis messages), or what precedes its end marker when the prompt
//     already opened it (starts_in_reasoning, see PromptEndsInReasoning). An output that ends
//     inside the block leaves it all reasoning.
//   - Text before, between and after calls is content.
//
// Choices for broken output:
//   - Malformed call markup (not JSON where JSON belongs, a missing name, a header that is not the
//     family's) carries no call: it is returned as content exactly as written, and parsing goes on
//     from the point where it went wrong. Nothing the model wrote is dropped, except markup and the
//     whitespace next to it.
//   - A call begins once its name is known. If the markup goes wrong after that, the call keeps the
//     arguments received before the fault (formats whose arguments we assemble close the object)
//     and the text from the fault on is content.
//   - The end of the output inside a call, by max_tokens (Finish(true)) or by EOS or a stop string
//     (Finish(false)): a call whose name is known is returned with the arguments text received so
//     far; nothing is added to complete JSON the model wrote, so a cut call's arguments can be an
//     unfinished JSON text. Formats whose arguments we assemble (XML parameters) differ by cause:
//     Finish(false) closes the object after the parameters read (a stop string may have taken the
//     closing tag), Finish(true) leaves it open, with a cut parameter value as an unclosed string.
//     Closing markup cut short at the very end is dropped. Call markup that ends before the name
//     is known carried no call: it is content, as written.
//
// Not thread-safe: one parser per output. Feed after Finish returns nothing.
#pragma once

#include <memory>
#include <string_view>

#include "core/tool_calls/family.h"
#include "core/tool_calls/tool_call.h"

namespace radixserve::tool_calls {

class OutputParser {
 public:
  virtual ~OutputParser();
  // Feeds more generated text; returns what became certain.
  virtual OutputDelta Feed(std::string_view text) = 0;
  // The end of the output (EOS, a stop string or max_tokens: `cut_by_length` for the last):
  // returns everything still held back.
  virtual OutputDelta Finish(bool cut_by_length) = 0;
};

// A parser for `family`. `starts_in_reasoning`: the prompt ends inside the family's reasoning block
// (a generation prompt ending in "<think>\n"); ignored by families without one.
std::unique_ptr<OutputParser> MakeOutputParser(ToolCallFamily family, bool starts_in_reasoning);

// A whole output parsed at once (the same parser, fed once).
ParsedOutput ParseOutput(ToolCallFamily family, std::string_view text, bool starts_in_reasoning, bool cut_by_length);

}  // namespace radixserve::tool_calls
