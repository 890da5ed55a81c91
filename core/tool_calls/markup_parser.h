// MarkupParser: the shape most families share: an optional reasoning block at the start of the
// output, then content in which a trigger literal ("<tool_call>", "[TOOL_CALLS]") starts call
// markup that the family reads, after which content resumes.
//
// A family says what its markers are and reads its call markup (ReadMarkup), ending each stretch of
// markup with ResumeContent (read) or Reject (not call markup after all: content as written).
//
// Not thread-safe: one parser per output.
#pragma once

#include <string_view>
#include <vector>

#include "core/tool_calls/family.h"
#include "core/tool_calls/marker_search.h"
#include "core/tool_calls/parser_core.h"

namespace radixserve::tool_calls {

class MarkupParser : public ParserCore {
 public:
  struct Markers {
    std::string_view reasoning_begin;  // "" when the family has no reasoning block
    std::string_view reasoning_end;
    std::vector<std::string_view> call_triggers;
    // Markup that means nothing to the client (Granite's <response>, Command R7B's
    // <|START_RESPONSE|>): removed from the content.
    std::vector<std::string_view> ignored = {};
  };
  // The markers of `family` from the family table, with `ignored` added.
  static Markers FamilyMarkers(ToolCallFamily family, std::vector<std::string_view> ignored = {});

 protected:
  MarkupParser(Markers markers, bool starts_in_reasoning);

  // Call markup began with call_triggers[trigger] (kOpensOutput: OpensWithCall said so);
  // markup_start() is where it begins and pos() is past the trigger.
  static constexpr size_t kOpensOutput = static_cast<size_t>(-1);
  virtual void BeginMarkup(size_t trigger) = 0;
  // Reads call markup from Unread(); returns false when it needs more text.
  virtual bool ReadMarkup() = 0;
  // The output ended inside call markup: finish with ResumeContent or Reject.
  virtual void EndOfOutputInMarkup() = 0;
  // Whether call markup opens the output at `unread`'s first non-space byte, with no trigger
  // (Llama 3's bare JSON). Asked only while no other text has been read.
  virtual Prefix OpensWithCall(std::string_view unread) { return Prefix::kNo; }

  // Matches markup that continues a begun call at pos() (after optional space). Text that can still
  // become one of `literals` is kMaybe even at the end of the output: there it is markup the end
  // cut off, for EndOfOutputInMarkup to drop.
  Prefix MatchMarkup(const std::vector<std::string_view>& literals, size_t* which, size_t* length) const {
    return MatchOneAfterSpace(Unread(), literals, /*at_end=*/false, which, length);
  }
  Prefix MatchMarkup(std::string_view literal, size_t* length) const {
    return MatchAfterSpace(Unread(), literal, /*at_end=*/false, length);
  }

  // The markup that closes a call block, at pos(): content resumes after it, or at pos() when
  // something else is there (the block had no closing marker). False while still undecided.
  bool CloseBlock(std::string_view close) {
    size_t length = 0;
    switch (MatchMarkup(close, &length)) {
      case Prefix::kYes:
        ResumeContent(pos() + length);
        return true;
      case Prefix::kNo:
        ResumeContent(pos());
        return true;
      case Prefix::kMaybe:
        return false;
    }
    return false;
  }

  size_t markup_start() const { return markup_start_; }
  // The call markup ended before `resume`: content resumes there.
  void ResumeContent(size_t resume);
  // The markup from `from` to `to` carried no call: it is content exactly as written, and reading
  // resumes at `to`.
  void Reject(size_t from, size_t to);

 private:
  enum class Mode : uint8_t { kStart, kReasoning, kContent, kMarkup };

  bool Step() final;
  bool EndOfOutput() final;
  bool StepStart();
  bool StepReasoning();
  bool StepContent();
  void EnterMarkup(size_t start, size_t trigger_end, size_t trigger);

  Markers markers_;
  std::vector<std::string_view> content_markers_;  // triggers, then ignored markers
  Mode mode_;
  bool text_seen_ = false;  // a non-space byte has been read
  size_t markup_start_ = 0;
};

}  // namespace radixserve::tool_calls
