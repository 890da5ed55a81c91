// kNone: a template with no tool-call syntax we know. Everything is content, unchanged.
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/markup_parser.h"

namespace radixserve::tool_calls {
namespace {

class PlainParser final : public MarkupParser {
 public:
  PlainParser() : MarkupParser(Markers{}, false) {}

 private:
  // There are no triggers, so there is never call markup.
  void BeginMarkup(size_t trigger) override {}
  bool ReadMarkup() override { return false; }
  void EndOfOutputInMarkup() override {}
};

}  // namespace

std::unique_ptr<OutputParser> MakePlainParser() { return std::make_unique<PlainParser>(); }

}  // namespace radixserve::tool_calls
