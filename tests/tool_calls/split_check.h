// Test helper: parses an output whole, cut in two at every byte boundary, and one byte per Feed,
// and checks that every way gives the same result and that each stream's deltas are well formed
// (a call's name in its first delta only, calls in order).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/tool_calls/output_parser.h"

namespace radixserve::tool_calls::testing {

inline std::string Describe(const ParsedOutput& p) {
  std::string s = "content=[" + p.content + "] reasoning=[" + p.reasoning + "] calls=" +
                  std::to_string(p.tool_calls.size());
  for (const ToolCall& c : p.tool_calls) s += " {id=" + c.id + " name=" + c.name + " args=" + c.arguments + "}";
  return s;
}

// Whether `s` is well-formed UTF-8.
inline bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// The text cut into whole UTF-8 characters (what a detokenizer hands over at the least).
inline std::vector<std::string_view> Characters(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) >> 6) == 2) ++n;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// Feeds `pieces` to a fresh parser and assembles the result; checks the deltas' shape and, when
// `whole_characters`, that every delta is whole UTF-8 characters.
inline ParsedOutput Stream(ToolCallFamily family, const std::vector<std::string_view>& pieces, bool starts_in_reasoning,
                           bool cut_by_length, std::string* shape_error, bool whole_characters = false) {
  auto parser = MakeOutputParser(family, starts_in_reasoning);
  ParsedOutput out;
  std::vector<bool> named;
  auto take = [&](const OutputDelta& d) {
    if (whole_characters && !(IsUtf8(d.content) && IsUtf8(d.reasoning))) *shape_error = "text cut inside a character";
    for (const ToolCallDelta& c : d.calls) {
      if (whole_characters && !IsUtf8(c.arguments)) *shape_error = "arguments cut inside a character";
      if (c.index < 0 || static_cast<size_t>(c.index) > named.size()) {
        *shape_error = "call index " + std::to_string(c.index) + " out of order";
      } else if (static_cast<size_t>(c.index) == named.size()) {
        if (c.name.empty()) *shape_error = "call " + std::to_string(c.index) + " begins without a name";
        named.push_back(true);
      } else if (!c.name.empty()) {
        *shape_error = "call " + std::to_string(c.index) + " named twice";
      } else if (static_cast<size_t>(c.index) + 1 != named.size()) {
        *shape_error = "call " + std::to_string(c.index) + " continued after a later call began";
      }
    }
    AppendDelta(d, &out);
  };
  for (std::string_view piece : pieces) take(parser->Feed(piece));
  take(parser->Finish(cut_by_length));
  if (!parser->Feed("more").empty()) *shape_error = "Feed after Finish returned something";
  return out;
}

// Checks that `text` parses to `want` whole, at every two-piece split and byte by byte.
inline void ExpectEverySplit(ToolCallFamily family, std::string_view text, const ParsedOutput& want,
                             bool starts_in_reasoning = false, bool cut_by_length = false) {
  ParsedOutput whole = ParseOutput(family, text, starts_in_reasoning, cut_by_length);
  ASSERT_EQ(whole, want) << "whole: " << Describe(whole) << "\n want: " << Describe(want);
  for (size_t i = 0; i <= text.size(); ++i) {
    std::string shape_error;
    ParsedOutput got = Stream(family, {text.substr(0, i), text.substr(i)}, starts_in_reasoning, cut_by_length, &shape_error);
    ASSERT_EQ(got, want) << "split at " << i << ": " << Describe(got);
    ASSERT_EQ(shape_error, "") << "split at " << i;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  std::string shape_error;
  ParsedOutput got = Stream(family, bytes, starts_in_reasoning, cut_by_length, &shape_error);
  ASSERT_EQ(got, want) << "byte by byte: " << Describe(got);
  ASSERT_EQ(shape_error, "") << "byte by byte";
  if (IsUtf8(text)) {
    got = Stream(family, Characters(text), starts_in_reasoning, cut_by_length, &shape_error, /*whole_characters=*/true);
    ASSERT_EQ(got, want) << "character by character: " << Describe(got);
    ASSERT_EQ(shape_error, "") << "character by character";
  }
}

inline ToolCall Call(std::string name, std::string arguments, std::string id = "") {
  return ToolCall{std::move(id), std::move(name), std::move(arguments)};
}

inline ParsedOutput Out(std::string content, std::string reasoning = "", std::vector<ToolCall> calls = {}) {
  return ParsedOutput{std::move(content), std::move(reasoning), std::move(calls)};
}

}  // namespace radixserve::tool_calls::testing
