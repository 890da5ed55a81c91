// Lexer: template source -> tokens, with jinja2's whitespace rules as Hugging Face transformers
// configures them (trim_blocks, lstrip_blocks, keep_trailing_newline=False).
//
// - "\r\n" and "\r" become "\n" everywhere, and one newline at the very end of the source is
//   dropped.
// - trim_blocks: the first "\n" after a block tag (%}) or comment (#}) is removed.
// - lstrip_blocks: spaces and tabs between the start of a line and a block tag or comment are
//   removed (not before {{ }}); "{%+" keeps them.
// - "-" beside a delimiter ({%- -%} {{- -}} {#- -#}) removes all whitespace, newlines included,
//   on that side; "+%}" keeps the newline trim_blocks would remove.
// - Comments vanish; {% raw %}...{% endraw %} becomes text.
// - String literals are decoded with Python's escapes (\n, \t, \\, \', \xhh, \uXXXX, octal...).
//
// Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/status.h"

namespace radixserve::jinja {

enum class TokenType : uint8_t {
  kData,        // text outside tags
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,  // value: the decoded text
  kInteger,
  kFloat,
  kOperator,  // value: the operator text, e.g. "==", "|", "("
  kEof,
};

struct Token {
  TokenType type;
  std::string value;
  int line = 1;
  int64_t int_value = 0;
  double float_value = 0;
};

// Fails (kCorrupt) on an unterminated tag, comment or string, a bad escape, an unexpected
// character or unbalanced brackets, naming the line. The last token is kEof.
Result<std::vector<Token>> Tokenize(std::string_view source);

}  // namespace radixserve::jinja
