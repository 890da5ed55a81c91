// Llama 3.1 / 3.2 / 3.3: a call is the whole answer, a JSON object {"name": N, "parameters": {...}}
// (the templates render exactly that for a past call), or the same after <|python_tag|>. The
// templates allow one call per turn; calls separated by ";" (which the 3.2 models write at times)
// are read too. The bare object is recognised only at the start of the output and only in the
// strict form (json_call_reader.h), so that an answer that happens to be JSON stays content.
// Llama 3.1's built-in tool syntax (<|python_tag|>brave_search.call(query="...")) and raw code
// after <|python_tag|> are not calls here: they come back as content.
#include <optional>

#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

class Llama3Parser final : public MarkupParser {
 public:
  Llama3Parser() : MarkupParser(FamilyMarkers(ToolCallFamily::kLlama3), false) {}

 private:
  enum class Stage : uint8_t { kJson, kAfterCall };

  Prefix OpensWithCall(std::string_view unread) override {
    for (char c : unread) {
      if (!IsSpace(c)) return c == '{' ? Prefix::kYes : Prefix::kNo;
    }
    return Prefix::kMaybe;
  }

  void BeginMarkup(size_t trigger) override { StartCall(markup_start(), pos()); }

  void StartCall(size_t segment_start, size_t json_start) {
    segment_start_ = segment_start;
    json_start_ = read_to_ = json_start;
    reader_.emplace(JsonCallReader::Shape::kCallObject, /*strict=*/true, sink());
    stage_ = Stage::kJson;
  }

  bool ReadMarkup() override {
    if (stage_ == Stage::kJson) {
      if (read_to_ == end()) return false;
      JsonCallReader::State state = reader_->Read(Text(read_to_, end()));
      read_to_ = end();
      if (state == JsonCallReader::State::kFailed) {
        RejectUnclaimed();
      } else if (state == JsonCallReader::State::kDone) {
        SetPos(json_start_ + reader_->end());
        stage_ = Stage::kAfterCall;
      }
      return true;
    }
    size_t length = 0;
    switch (MatchMarkup(";", &length)) {
      case Prefix::kYes:
        StartCall(pos() + length - 1, pos() + length);
        return true;
      case Prefix::kNo:
        ResumeContent(pos());
        return true;
      case Prefix::kMaybe:
        return false;
    }
    return false;
  }

  void EndOfOutputInMarkup() override {
    if (stage_ == Stage::kJson) {
      reader_->EndOfOutput();
      RejectUnclaimed();
    } else {
      ResumeContent(end());  // only space is left
    }
  }

  void RejectUnclaimed() {
    size_t fault = json_start_ + reader_->fail_offset();
    Reject(reader_->began_call() ? json_start_ + reader_->unclaimed_from() : segment_start_, fault);
  }

  Stage stage_ = Stage::kJson;
  size_t segment_start_ = 0;  // where this call's markup began (the trigger, or the ";")
  size_t json_start_ = 0;
  size_t read_to_ = 0;
  std::optional<JsonCallReader> reader_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeLlama3Parser() { return std::make_unique<Llama3Parser>(); }

}  // namespace radixserve::tool_calls
