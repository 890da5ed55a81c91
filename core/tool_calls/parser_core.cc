#include "core/tool_calls/parser_core.h"

#include <algorithm>
#include <utility>

namespace radixserve::tool_calls {

OutputDelta ParserCore::Feed(std::string_view text) {
  if (finished_) return {};
  buf_.append(text);
  while (Step()) {
  }
  Compact();
  return std::exchange(out_, {});
}

OutputDelta ParserCore::Finish(bool cut_by_length) {
  if (finished_) return {};
  finished_ = true;
  at_end_ = true;
  cut_by_length_ = cut_by_length;
  do {
    while (Step()) {
    }
  } while (EndOfOutput());
  if (call_open_) EndCall();
  content_.Finish(&out_.content);
  reasoning_.Finish(&out_.reasoning);
  buf_.clear();
  return std::exchange(out_, {});
}

void ParserCore::Compact() {
  size_t keep = std::min(pos_, hold_);
  // Erasing is a copy of what is kept: only worth it once the dead prefix is large.
  if (keep - base_ < 4096 || keep - base_ < buf_.size() / 2) return;
  buf_.erase(0, keep - base_);
  base_ = keep;
}

ToolCallDelta& ParserCore::OpenCallDelta() {
  if (out_.calls.empty() || out_.calls.back().index != call_index_) {
    out_.calls.push_back(ToolCallDelta{call_index_, "", "", ""});
  }
  return out_.calls.back();
}

void ParserCore::BeginCall(std::string id, std::string name) {
  if (call_open_) EndCall();
  content_.Markup();
  call_open_ = true;
  ++call_index_;
  out_.calls.push_back(ToolCallDelta{call_index_, std::move(id), std::move(name), ""});
}

void ParserCore::AppendArguments(std::string_view fragment) {
  if (!call_open_ || fragment.empty()) return;
  OpenCallDelta().arguments.append(fragment);
}

void ParserCore::SetCallId(std::string id) {
  if (!call_open_ || id.empty()) return;
  ToolCallDelta& d = OpenCallDelta();
  if (d.id.empty()) {
    d.id = std::move(id);
  } else {
    out_.calls.push_back(ToolCallDelta{call_index_, std::move(id), "", ""});
  }
}

void ParserCore::EndCall() {
  call_open_ = false;
  content_.Markup();
}

}  // namespace radixserve::tool_calls
