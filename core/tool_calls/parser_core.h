// ParserCore: what every family's parser shares: the generated text not yet decided, the content
// and reasoning channels, and the assembly of deltas (it is the CallSink the readers report to).
//
// A family implements Step, which decides what it can from the unread text, and EndOfOutput.
// Positions are absolute offsets in the whole output; text before pos() is dropped from memory
// unless the family holds it (Hold) to return it as content later.
//
// Not thread-safe: one parser per output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/tool_calls/call_sink.h"
#include "core/tool_calls/output_parser.h"
#include "core/tool_calls/text_channel.h"

namespace radixserve::tool_calls {

class ParserCore : public OutputParser, protected CallSink {
 public:
  OutputDelta Feed(std::string_view text) final;
  OutputDelta Finish(bool cut_by_length) final;

 protected:
  // `starts_in_reasoning`: the reasoning channel begins right after markup (the prompt's "<think>").
  explicit ParserCore(bool starts_in_reasoning) : reasoning_(/*after_markup=*/starts_in_reasoning) {}

  // Decides what it can from Unread(); returns false when it cannot go on without more text (at the
  // end of the output: when nothing is left to decide).
  virtual bool Step() = 0;
  // Called at the end of the output once Step returned false; returns true when it handed text back
  // to be read again (Step runs again), false when done.
  virtual bool EndOfOutput() = 0;

  std::string_view Unread() const { return std::string_view(buf_).substr(pos_ - base_); }
  size_t pos() const { return pos_; }
  size_t end() const { return base_ + buf_.size(); }
  void Skip(size_t n) { pos_ += n; }
  void SetPos(size_t pos) { pos_ = pos; }
  // The output's text from `from` to `to` (absolute; `from` at or after what is held).
  std::string_view Text(size_t from, size_t to) const { return std::string_view(buf_).substr(from - base_, to - from); }
  // Keeps the text from `from` on in memory until Release.
  void Hold(size_t from) { hold_ = from; }
  void Release() { hold_ = kNoHold; }
  bool at_end() const { return at_end_; }
  bool cut_by_length() const { return cut_by_length_; }

  void AddContent(std::string_view text) { content_.Add(text, &out_.content); }
  void AddReasoning(std::string_view text) { reasoning_.Add(text, &out_.reasoning); }
  void ContentMarkup() { content_.Markup(); }
  void ReasoningMarkup() { reasoning_.Markup(); }

  // CallSink: a call begun or ended is markup for the content around it.
  void BeginCall(std::string id, std::string name) override;
  void AppendArguments(std::string_view fragment) override;
  void SetCallId(std::string id) override;
  void EndCall() override;
  bool call_open() const { return call_open_; }
  // This parser as the sink the readers report to.
  CallSink* sink() { return this; }

 private:
  static constexpr size_t kNoHold = static_cast<size_t>(-1);
  // The delta entry of the open call in out_ (added when the last entry is another call's).
  ToolCallDelta& OpenCallDelta();
  // Frees the text nothing refers to any more.
  void Compact();

  std::string buf_;  // the output from base_ on
  size_t base_ = 0;
  size_t pos_ = 0;
  size_t hold_ = kNoHold;
  bool at_end_ = false;
  bool cut_by_length_ = false;
  bool finished_ = false;
  TextChannel content_;
  TextChannel reasoning_;
  OutputDelta out_;
  bool call_open_ = false;
  int call_index_ = -1;
};

}  // namespace radixserve::tool_calls
