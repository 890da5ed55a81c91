#include "core/tool_calls/markup_parser.h"

#include <utility>

namespace radixserve::tool_calls {
namespace {

bool HasText(std::string_view s) {
  for (char c : s) {
    if (!IsSpace(c)) return true;
  }
  return false;
}

}  // namespace

MarkupParser::Markers MarkupParser::FamilyMarkers(ToolCallFamily family, std::vector<std::string_view> ignored) {
  const FamilySyntax& syntax = SyntaxOf(family);
  return Markers{syntax.reasoning_begin, syntax.reasoning_end, syntax.call_triggers, std::move(ignored)};
}

MarkupParser::MarkupParser(Markers markers, bool starts_in_reasoning)
    : ParserCore(starts_in_reasoning && !markers.reasoning_begin.empty()), markers_(std::move(markers)) {
  content_markers_ = markers_.call_triggers;
  content_markers_.insert(content_markers_.end(), markers_.ignored.begin(), markers_.ignored.end());
  bool has_reasoning = !markers_.reasoning_begin.empty();
  mode_ = !has_reasoning ? Mode::kContent : starts_in_reasoning ? Mode::kReasoning : Mode::kStart;
}

bool MarkupParser::Step() {
  switch (mode_) {
    case Mode::kStart:
      return StepStart();
    case Mode::kReasoning:
      return StepReasoning();
    case Mode::kContent:
      return StepContent();
    case Mode::kMarkup:
      return ReadMarkup();
  }
  return false;
}

bool MarkupParser::EndOfOutput() {
  if (mode_ != Mode::kMarkup) return false;
  EndOfOutputInMarkup();
  return true;
}

bool MarkupParser::StepStart() {
  // The reasoning block counts only at the very start (after whitespace): "<think>" later on is text.
  size_t length = 0;
  switch (MatchAfterSpace(Unread(), markers_.reasoning_begin, at_end(), &length)) {
    case Prefix::kYes:
      Skip(length);
      text_seen_ = true;
      ReasoningMarkup();
      mode_ = Mode::kReasoning;
      return true;
    case Prefix::kNo:
      mode_ = Mode::kContent;
      return true;
    case Prefix::kMaybe:
      return false;
  }
  return false;
}

bool MarkupParser::StepReasoning() {
  std::string_view unread = Unread();
  MarkerMatch m = FindMarker(unread, {markers_.reasoning_end}, at_end());
  if (m.found) {
    AddReasoning(unread.substr(0, m.at));
    Skip(m.at + markers_.reasoning_end.size());
    text_seen_ = true;
    ReasoningMarkup();
    ContentMarkup();
    mode_ = Mode::kContent;
    return true;
  }
  if (m.safe == 0) return false;
  AddReasoning(unread.substr(0, m.safe));
  Skip(m.safe);
  return true;
}

bool MarkupParser::StepContent() {
  std::string_view unread = Unread();
  if (!text_seen_) {
    size_t length = 0;
    switch (OpensWithCall(unread)) {
      case Prefix::kYes: {
        while (length < unread.size() && IsSpace(unread[length])) ++length;
        AddContent(unread.substr(0, length));
        EnterMarkup(pos() + length, pos() + length, kOpensOutput);
        return true;
      }
      case Prefix::kMaybe:
        if (!at_end()) return false;
        break;
      case Prefix::kNo:
        break;
    }
  }
  MarkerMatch m = FindMarker(unread, content_markers_, at_end());
  if (m.found) {
    std::string_view before = unread.substr(0, m.at);
    AddContent(before);
    text_seen_ = text_seen_ || HasText(before);
    size_t start = pos() + m.at;
    size_t trigger_end = start + content_markers_[m.marker].size();
    if (m.marker >= markers_.call_triggers.size()) {  // ignored markup
      SetPos(trigger_end);
      text_seen_ = true;
      ContentMarkup();
      return true;
    }
    EnterMarkup(start, trigger_end, m.marker);
    return true;
  }
  if (m.safe == 0) return false;
  std::string_view safe = unread.substr(0, m.safe);
  AddContent(safe);
  text_seen_ = text_seen_ || HasText(safe);
  Skip(m.safe);
  return true;
}

void MarkupParser::EnterMarkup(size_t start, size_t trigger_end, size_t trigger) {
  markup_start_ = start;
  SetPos(trigger_end);
  Hold(start);
  text_seen_ = true;
  mode_ = Mode::kMarkup;
  BeginMarkup(trigger);
}

void MarkupParser::ResumeContent(size_t resume) {
  SetPos(resume);
  Release();
  ContentMarkup();
  mode_ = Mode::kContent;
}

void MarkupParser::Reject(size_t from, size_t to) {
  AddContent(Text(from, to));
  SetPos(to);
  Release();
  mode_ = Mode::kContent;
}

}  // namespace radixserve::tool_calls
