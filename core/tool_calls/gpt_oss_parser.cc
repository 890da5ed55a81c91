// gpt-oss (OpenAI's harmony format). The prompt ends with "<|start|>assistant"; the output is a
// series of messages, each a header, <|message|>, and a body ended by <|end|>, <|call|> or
// <|return|>:
//   <|channel|>analysis<|message|>...<|end|>                                  reasoning
//   <|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json<|message|>{...}<|call|>
//   <|start|>assistant to=functions.N<|channel|>commentary json<|message|>{...}<|call|>
//                                                                             a call of N (the
//                                                                             template's order)
//   <|start|>assistant<|channel|>final<|message|>...<|return|>                content
// A message with no recipient on another channel (a commentary preamble) is content; a recipient
// outside "functions." (a built-in tool such as browser.search) is a call of that whole name. A
// call's body is passed on as its arguments as it arrives, as the model wrote it.
#include <algorithm>
#include <string>
#include <vector>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/marker_search.h"
#include "core/tool_calls/parser_core.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr size_t kMaxHeaderLength = 512;

// Where a header stops looking like one: the first byte that is neither part of a name, a space, an
// '=', a '/' nor part of a special token <|word|> (one cut off by the end of `h` counts as one);
// npos when all of it does.
size_t HeaderFault(std::string_view h) {
  constexpr size_t kNone = std::string_view::npos;
  size_t i = 0;
  while (i < h.size()) {
    char c = h[i];
    if (IsCallNameChar(c) || c == ' ' || c == '=' || c == '/') {
      ++i;
      continue;
    }
    if (c != '<') return i;
    size_t j = i + 1;
    if (j == h.size()) return kNone;
    if (h[j] != '|') return i;
    ++j;
    while (j < h.size() && IsCallNameChar(h[j])) ++j;
    if (j == h.size()) return kNone;
    if (h[j] != '|') return i;
    if (j + 1 == h.size()) return kNone;
    if (h[j + 1] != '>') return i;
    i = j + 2;
  }
  return kNone;
}

// The name after `key` in the header ("" when absent).
std::string_view HeaderField(std::string_view h, std::string_view key) {
  size_t at = h.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = h.substr(at + key.size());
  size_t n = 0;
  while (n < rest.size() && (IsCallNameChar(rest[n]) || rest[n] == '/')) ++n;
  return rest.substr(0, n);
}

// What ends a message body: its end markers first, then the starts of a next header (a model may
// leave out the end marker).
const std::vector<std::string_view>& BodyEnds() {
  static const std::vector<std::string_view> ends = {"<|end|>", "<|call|>", "<|return|>", kStart, kChannel};
  return ends;
}
constexpr size_t kEndMarkers = 3;

class GptOssParser final : public ParserCore {
 public:
  GptOssParser() : ParserCore(false) { Hold(0); }

 private:
  enum class Mode : uint8_t { kHeader, kBetween, kBody };
  enum class Body : uint8_t { kReasoning, kContent, kCall };

  bool Step() override {
    switch (mode_) {
      case Mode::kBetween: {
        std::string_view unread = Unread();
        MarkerMatch m = FindMarker(unread, {kStart, kChannel}, at_end());
        size_t n = m.found ? m.at : m.safe;
        AddContent(unread.substr(0, n));  // text outside any message
        Skip(n);
        if (!m.found) return n > 0;
        header_start_ = pos();
        Hold(header_start_);
        mode_ = Mode::kHeader;
        return true;
      }
      case Mode::kHeader:
        return ReadHeader();
      case Mode::kBody: {
        std::string_view unread = Unread();
        MarkerMatch m = FindMarker(unread, BodyEnds(), at_end());
        size_t n = m.found ? m.at : m.safe;
        AddBody(unread.substr(0, n));
        Skip(n);
        if (!m.found) return n > 0;
        if (m.marker < kEndMarkers) Skip(BodyEnds()[m.marker].size());
        EndBody();
        mode_ = Mode::kBetween;
        return true;
      }
    }
    return false;
  }

  bool ReadHeader() {
    // Decided on the header's first kMaxHeaderLength bytes only, so that the decision is the same
    // however the text arrives.
    std::string_view all = Text(header_start_, end());
    std::string_view header = all.substr(0, kMaxHeaderLength);
    size_t at = header.find(kMessage);
    size_t fault = HeaderFault(at == std::string_view::npos ? header : header.substr(0, at + kMessage.size()));
    if (at == std::string_view::npos && fault == std::string_view::npos) {
      if (all.size() < kMaxHeaderLength) return false;
      fault = kMaxHeaderLength;  // too long for a header
    }
    if (fault != std::string_view::npos) {  // not a header: text, up to where it stopped looking like one
      fault = std::max<size_t>(fault, 1);
      AddContent(all.substr(0, fault));
      SetPos(header_start_ + fault);
      Release();
      mode_ = Mode::kBetween;
      return true;
    }
    header = header.substr(0, at);
    SetPos(header_start_ + at + kMessage.size());
    Release();
    std::string_view recipient = HeaderField(header, "to=");
    std::string_view channel = HeaderField(header, kChannel);
    if (recipient.starts_with("functions.")) recipient.remove_prefix(10);
    if (!recipient.empty() && recipient != "assistant" && recipient != "user" && recipient != "all") {
      body_ = Body::kCall;
      BeginCall("", std::string(recipient));
    } else if (channel == "analysis") {
      body_ = Body::kReasoning;
      ReasoningMarkup();
    } else {
      body_ = Body::kContent;
      ContentMarkup();
    }
    mode_ = Mode::kBody;
    return true;
  }

  void AddBody(std::string_view text) {
    switch (body_) {
      case Body::kReasoning: AddReasoning(text); break;
      case Body::kContent: AddContent(text); break;
      case Body::kCall: AppendArguments(text); break;
    }
  }

  void EndBody() {
    switch (body_) {
      case Body::kReasoning: ReasoningMarkup(); break;
      case Body::kContent: ContentMarkup(); break;
      case Body::kCall: EndCall(); break;
    }
  }

  bool EndOfOutput() override {
    if (mode_ == Mode::kHeader) {  // a header the output cut off carried nothing: text as written
      AddContent(Text(header_start_, end()));
      SetPos(end());
      Release();
      mode_ = Mode::kBetween;
    } else if (mode_ == Mode::kBody) {
      EndBody();
      mode_ = Mode::kBetween;
    }
    return false;
  }

  // The output continues the prompt's "<|start|>assistant": its first header starts at once.
  Mode mode_ = Mode::kHeader;
  Body body_ = Body::kContent;
  size_t header_start_ = 0;
};

}  // namespace

std::unique_ptr<OutputParser> MakeGptOssParser() { return std::make_unique<GptOssParser>(); }

}  // namespace radixserve::tool_calls
