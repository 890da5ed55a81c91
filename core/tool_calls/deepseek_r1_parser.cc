// DeepSeek R1 (and its Qwen / Llama distills):
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>
//   \n<｜tool▁call▁begin｜>...<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// after an optional <think>...</think>. The code fence around the arguments is optional here, and a
// missing <｜tool▁call▁end｜> or <｜tool▁calls▁end｜> is tolerated.
#include <optional>
#include <string>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kFence = "```";

class DeepSeekR1Parser final : public MarkupParser {
 public:
  explicit DeepSeekR1Parser(bool starts_in_reasoning)
      : MarkupParser(FamilyMarkers(ToolCallFamily::kDeepSeekR1), starts_in_reasoning) {}

 private:
  enum class Stage : uint8_t { kCallBegin, kType, kName, kOpenFence, kJson, kCloseFence, kCallEnd };

  void BeginMarkup(size_t trigger) override {
    stage_ = Stage::kCallBegin;
    segment_start_ = markup_start();
    calls_ = 0;
  }

  bool ReadMarkup() override {
    size_t length = 0;
    size_t which = 0;
    switch (stage_) {
      case Stage::kCallBegin:
        switch (calls_ == 0 ? MatchOneAfterSpace(Unread(), {kCallBegin, kCallsEnd}, at_end(), &which, &length)
                            : MatchMarkup({kCallBegin, kCallsEnd}, &which, &length)) {
          case Prefix::kYes:
            if (which == 1) {
              ResumeContent(pos() + length);
            } else {
              segment_start_ = calls_ == 0 ? markup_start() : pos();
              Skip(length);
              stage_ = Stage::kType;
            }
            return true;
          case Prefix::kNo:
            if (calls_ == 0) {
              Reject(markup_start(), pos());
            } else {
              ResumeContent(pos());
            }
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      case Stage::kType:   // "function", up to <｜tool▁sep｜>
      case Stage::kName: {  // the name, up to the newline
        std::string_view unread = Unread();
        size_t n = CallNameLength(unread);
        if (n == unread.size()) {
          if (n <= kMaxCallNameLength && !at_end()) return false;
          Reject(segment_start_, pos() + n);
          return true;
        }
        std::string_view rest = unread.substr(n);
        if (stage_ == Stage::kType) {
          if (!rest.starts_with(kSep)) {
            if (!at_end() && kSep.starts_with(rest)) return false;
            Reject(segment_start_, pos() + n);
            return true;
          }
          Skip(n + kSep.size());
          stage_ = Stage::kName;
          return true;
        }
        if (rest[0] != '\n' || n == 0) {
          Reject(segment_start_, pos() + n);
          return true;
        }
        name_ = std::string(unread.substr(0, n));
        Skip(n + 1);
        stage_ = Stage::kOpenFence;
        return true;
      }
      case Stage::kOpenFence:
        switch (MatchOneAfterSpace(Unread(), {"```json", kFence}, at_end(), &which, &length)) {
          case Prefix::kMaybe:
            return false;
          case Prefix::kYes:
            Skip(length);
            [[fallthrough]];
          case Prefix::kNo:
            json_start_ = read_to_ = pos();
            reader_.emplace(JsonCallReader::Shape::kArguments, /*strict=*/false, sink(), name_);
            stage_ = Stage::kJson;
            return true;
        }
        return false;
      case Stage::kJson: {
        if (read_to_ == end()) return false;
        JsonCallReader::State state = reader_->Read(Text(read_to_, end()));
        read_to_ = end();
        if (state == JsonCallReader::State::kFailed) {
          size_t fault = json_start_ + reader_->fail_offset();
          Reject(reader_->began_call() ? fault : segment_start_, fault);
        } else if (state == JsonCallReader::State::kDone) {
          ++calls_;
          SetPos(json_start_ + reader_->end());
          stage_ = Stage::kCloseFence;
        }
        return true;
      }
      case Stage::kCloseFence:
      case Stage::kCallEnd: {
        std::string_view literal = stage_ == Stage::kCloseFence ? kFence : kCallEnd;
        switch (MatchMarkup(literal, &length)) {
          case Prefix::kMaybe:
            return false;
          case Prefix::kYes:
            Skip(length);
            [[fallthrough]];
          case Prefix::kNo:
            stage_ = stage_ == Stage::kCloseFence ? Stage::kCallEnd : Stage::kCallBegin;
            return true;
        }
        return false;
      }
    }
    return false;
  }

  void EndOfOutputInMarkup() override {
    if (stage_ == Stage::kJson) {
      reader_->EndOfOutput();
      if (reader_->began_call()) {
        ResumeContent(end());
        return;
      }
    }
    bool after_call = stage_ == Stage::kCloseFence || stage_ == Stage::kCallEnd || (stage_ == Stage::kCallBegin && calls_ > 0);
    if (after_call) {
      ResumeContent(end());  // what is left is space or a marker cut short
    } else {
      Reject(segment_start_, end());
    }
  }

  Stage stage_ = Stage::kCallBegin;
  size_t segment_start_ = 0;  // where the markup of the call being read began
  int calls_ = 0;
  std::string name_;
  size_t json_start_ = 0;
  size_t read_to_ = 0;
  std::optional<JsonCallReader> reader_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeDeepSeekR1Parser(bool starts_in_reasoning) {
  return std::make_unique<DeepSeekR1Parser>(starts_in_reasoning);
}

}  // namespace radixserve::tool_calls
