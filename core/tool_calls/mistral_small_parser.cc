// Mistral Small 3.2 and Ministral 3: each call is [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...} (Small 3.2
// renders the id; Ministral 3 writes [TOOL_CALLS]NAME[ARGS]{...}); a reasoning model thinks in
// [THINK]...[/THINK] first.
#include <optional>
#include <string>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kCallId = "[CALL_ID]";
constexpr std::string_view kArgs = "[ARGS]";

class MistralSmallParser final : public MarkupParser {
 public:
  explicit MistralSmallParser(bool starts_in_reasoning)
      : MarkupParser(FamilyMarkers(ToolCallFamily::kMistralSmall), starts_in_reasoning) {}

 private:
  enum class Stage : uint8_t { kName, kId, kJson };

  void BeginMarkup(size_t trigger) override {
    stage_ = Stage::kName;
    name_.clear();
    id_.clear();
  }

  bool ReadMarkup() override {
    if (stage_ == Stage::kJson) {
      if (read_to_ == end()) return false;
      JsonCallReader::State state = reader_->Read(Text(read_to_, end()));
      read_to_ = end();
      if (state == JsonCallReader::State::kFailed) {
        size_t fault = json_start_ + reader_->fail_offset();
        Reject(reader_->began_call() ? fault : markup_start(), fault);
      } else if (state == JsonCallReader::State::kDone) {
        ResumeContent(json_start_ + reader_->end());
      }
      return true;
    }
    // A name (or id) runs up to the next marker; a byte that cannot be part of it means this is
    // not call markup.
    std::string_view unread = Unread();
    size_t n = CallNameLength(unread);
    if (n == unread.size()) {
      if (n <= kMaxCallNameLength && !at_end()) return false;
      Reject(markup_start(), pos() + n);
      return true;
    }
    std::string_view rest = unread.substr(n);
    bool args = rest.starts_with(kArgs);
    bool id = stage_ == Stage::kName && rest.starts_with(kCallId);
    if (!args && !id) {
      bool maybe = !at_end() && (kArgs.starts_with(rest) || (stage_ == Stage::kName && kCallId.starts_with(rest)));
      if (maybe) return false;
      Reject(markup_start(), pos() + n);
      return true;
    }
    if (n == 0) {  // an empty name or id
      Reject(markup_start(), pos());
      return true;
    }
    (stage_ == Stage::kName ? name_ : id_) = std::string(unread.substr(0, n));
    if (id) {
      Skip(n + kCallId.size());
      stage_ = Stage::kId;
      return true;
    }
    Skip(n + kArgs.size());
    json_start_ = read_to_ = pos();
    reader_.emplace(JsonCallReader::Shape::kArguments, /*strict=*/false, sink(), name_, id_);
    stage_ = Stage::kJson;
    return true;
  }

  void EndOfOutputInMarkup() override {
    if (stage_ == Stage::kJson) {
      reader_->EndOfOutput();
      if (reader_->began_call()) {
        ResumeContent(end());
        return;
      }
    }
    Reject(markup_start(), end());
  }

  Stage stage_ = Stage::kName;
  std::string name_;
  std::string id_;
  size_t json_start_ = 0;
  size_t read_to_ = 0;
  std::optional<JsonCallReader> reader_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeMistralSmallParser(bool starts_in_reasoning) {
  return std::make_unique<MistralSmallParser>(starts_in_reasoning);
}

}  // namespace radixserve::tool_calls
