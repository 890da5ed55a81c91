// ParameterValueJson: the JSON text of a call parameter written as raw text, for the formats that
// write each parameter as markup around its value (Qwen3-Coder's <parameter=P>, MiniCPM5's
// <param name="P">) and so carry no type.
//
// A value that parses as JSON stays JSON (3, 0.5, true, {"a": 1}, [6, 12, 18], "quoted"). The
// spellings Python prints for non-string values, which is what these templates render and so what
// the models learned to write, become their JSON equivalents: True, False, None, and dicts and lists
// in repr form ({'lat': -23.55}). Everything else is a JSON string of the text. Without the tool's
// schema a string parameter whose text looks like one of those (a zip code 12345, the word True)
// comes out as a number or a boolean.
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace radixserve::tool_calls {

std::string ParameterValueJson(std::string_view raw);

// A JSON string literal holding `text` (bytes that are not UTF-8 become U+FFFD).
std::string JsonString(std::string_view text);

}  // namespace radixserve::tool_calls
