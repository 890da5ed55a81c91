// TextChannel: one stream of text the client sees (content or reasoning), with the whitespace that
// only separates text from markup taken out.
//
// Models surround markup with newlines ("</think>\n\n", "\n<tool_call>"), which are layout, not
// text. The rules, which give the same result however the text is cut into pieces:
//   - whitespace right before markup is dropped;
//   - whitespace right after markup is dropped when markup or the end of the output follows it, or
//     when the channel has no text yet; between two pieces of text it is kept as their separator;
//   - all other whitespace is kept (an output with no markup passes through unchanged).
// Whitespace at the end of what has arrived is held until what follows it decides.
//
// Not thread-safe; owned by one parser.
#pragma once

#include <string>
#include <string_view>

namespace radixserve::tool_calls {

class TextChannel {
 public:
  // `after_markup`: the channel starts right after markup (reasoning whose "<think>" ended the prompt).
  explicit TextChannel(bool after_markup = false) : after_markup_(after_markup) {}

  // Appends text to the channel; what became certain goes to `out`.
  void Add(std::string_view text, std::string* out);
  // Markup begins or ends here.
  void Markup() {
    held_ws_.clear();
    after_markup_ = true;
  }
  // The end of the output.
  void Finish(std::string* out);

 private:
  std::string held_ws_;
  bool after_markup_;
  bool has_text_ = false;
};

}  // namespace radixserve::tool_calls
