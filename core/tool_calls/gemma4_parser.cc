// Gemma 4: <|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|> per call, after an optional
// <|channel>thought\n...<channel|> reasoning block. After its calls the model writes
// <|tool_response> (where the tool's answer is to go), which is dropped here. The arguments are
// rewritten into JSON as they stream (gemma_arguments.h).
#include <string>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/gemma_arguments.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

class Gemma4Parser final : public MarkupParser {
 public:
  explicit Gemma4Parser(bool starts_in_reasoning)
      : MarkupParser(FamilyMarkers(ToolCallFamily::kGemma4, {"<|tool_response>"}), starts_in_reasoning) {}

 private:
  enum class Stage : uint8_t { kCall, kName, kArguments, kClose };

  void BeginMarkup(size_t trigger) override { stage_ = Stage::kCall; }

  bool ReadMarkup() override {
    size_t length = 0;
    switch (stage_) {
      case Stage::kCall:
        switch (MatchAfterSpace(Unread(), "call:", at_end(), &length)) {
          case Prefix::kYes:
            Skip(length);
            stage_ = Stage::kName;
            return true;
          case Prefix::kNo:
            Reject(markup_start(), pos());
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      case Stage::kName: {
        std::string_view unread = Unread();
        size_t n = CallNameLength(unread);
        if (n == unread.size() && n <= kMaxCallNameLength && !at_end()) return false;
        if (n == unread.size() || n == 0 || n > kMaxCallNameLength || unread[n] != '{') {
          Reject(markup_start(), pos() + n);
          return true;
        }
        BeginCall("", std::string(unread.substr(0, n)));
        Release();  // from here on the markup is never handed back as content
        Skip(n);    // the '{' is the arguments' first byte
        arguments_ = GemmaArguments();
        stage_ = Stage::kArguments;
        return true;
      }
      case Stage::kArguments:
        return ReadArguments();
      case Stage::kClose:
        return CloseBlock("<tool_call|>");
    }
    return false;
  }

  bool ReadArguments() {
    std::string json;
    size_t used = arguments_.Translate(Unread(), at_end(), &json);
    Skip(used);
    AppendArguments(json);
    switch (arguments_.state()) {
      case GemmaArguments::State::kDone:
        EndCall();
        stage_ = Stage::kClose;
        return true;
      case GemmaArguments::State::kFailed:  // the call keeps what it has; the rest is content
        EndCall();
        ResumeContent(pos());
        return true;
      case GemmaArguments::State::kReading:
        return used > 0;
    }
    return false;
  }

  void EndOfOutputInMarkup() override {
    switch (stage_) {
      case Stage::kCall:
      case Stage::kName:
        Reject(markup_start(), end());
        return;
      case Stage::kArguments:
        ReadArguments();
        if (call_open()) EndCall();
        ResumeContent(pos());
        return;
      case Stage::kClose:
        ResumeContent(end());  // what is left is space or a closing marker cut short
        return;
    }
  }

  Stage stage_ = Stage::kCall;
  GemmaArguments arguments_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeGemma4Parser(bool starts_in_reasoning) {
  return std::make_unique<Gemma4Parser>(starts_in_reasoning);
}

}  // namespace radixserve::tool_calls
