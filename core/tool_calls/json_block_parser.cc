// The families whose call markup is a trigger followed by JSON call objects, optionally closed by a
// marker: Hermes / Qwen2.5 / QwQ, Mistral Nemo, firefunction v2, Granite 3.3 and Command R7B differ
// only in their markers and key names (json_call_reader.h reads all their spellings), so one class
// serves them, configured per family below.
#include <optional>

#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

// Reads: trigger, JSON (one call object or a list of them), then the closing marker if the family
// has one (tolerated when missing: models drop it, and a stop string can take it).
class JsonBlockParser final : public MarkupParser {
 public:
  struct Config {
    Markers markers;
    std::string_view close;     // "" when the JSON is not closed by a marker
    bool trigger_ends_in_json;  // the trigger's last byte is the JSON's first ("functools[")
  };

  JsonBlockParser(Config config, bool starts_in_reasoning)
      : MarkupParser(config.markers, starts_in_reasoning), config_(std::move(config)) {}

 private:
  enum class Stage : uint8_t { kJson, kClose };

  void BeginMarkup(size_t trigger) override {
    json_start_ = config_.trigger_ends_in_json ? pos() - 1 : pos();
    read_to_ = json_start_;
    reader_.emplace(JsonCallReader::Shape::kCallList, /*strict=*/false, sink());
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
        size_t json_end = json_start_ + reader_->end();
        if (config_.close.empty()) {
          ResumeContent(json_end);
        } else {
          SetPos(json_end);
          stage_ = Stage::kClose;
        }
      }
      return true;
    }
    return CloseBlock(config_.close);
  }

  void EndOfOutputInMarkup() override {
    if (stage_ == Stage::kJson) {
      reader_->EndOfOutput();
      RejectUnclaimed();
    } else {
      ResumeContent(end());  // what is left is space or a closing marker cut short
    }
  }

  // The reader failed: what no call claimed is content; reading goes on at the fault.
  void RejectUnclaimed() {
    size_t fault = json_start_ + reader_->fail_offset();
    size_t from = reader_->began_call() ? json_start_ + reader_->unclaimed_from() : markup_start();
    Reject(from, fault);
  }

  Config config_;
  Stage stage_ = Stage::kJson;
  size_t json_start_ = 0;
  size_t read_to_ = 0;
  std::optional<JsonCallReader> reader_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeHermesParser(bool starts_in_reasoning) {
  return std::make_unique<JsonBlockParser>(
      JsonBlockParser::Config{MarkupParser::FamilyMarkers(ToolCallFamily::kHermes), "</tool_call>", false},
      starts_in_reasoning);
}

std::unique_ptr<OutputParser> MakeMistralNemoParser() {
  return std::make_unique<JsonBlockParser>(
      JsonBlockParser::Config{MarkupParser::FamilyMarkers(ToolCallFamily::kMistralNemo), "", false}, false);
}

std::unique_ptr<OutputParser> MakeFirefunctionParser() {
  return std::make_unique<JsonBlockParser>(
      JsonBlockParser::Config{MarkupParser::FamilyMarkers(ToolCallFamily::kFirefunctionV2), "", true}, false);
}

std::unique_ptr<OutputParser> MakeGraniteParser(bool starts_in_reasoning) {
  // In thinking mode Granite 3.3 writes <think>...</think><response>...</response>.
  return std::make_unique<JsonBlockParser>(
      JsonBlockParser::Config{MarkupParser::FamilyMarkers(ToolCallFamily::kGranite, {"<response>", "</response>"}), "",
                              false},
      starts_in_reasoning);
}

std::unique_ptr<OutputParser> MakeCommandR7BParser(bool starts_in_reasoning) {
  return std::make_unique<JsonBlockParser>(
      JsonBlockParser::Config{
          MarkupParser::FamilyMarkers(ToolCallFamily::kCommandR7B, {"<|START_RESPONSE|>", "<|END_RESPONSE|>"}),
          "<|END_ACTION|>", false},
      starts_in_reasoning);
}

}  // namespace radixserve::tool_calls
