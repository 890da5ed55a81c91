// ParameterObject: writes the arguments object of a call whose parameters arrive one at a time (the
// XML formats) to a CallSink, as {"p1": v1, "p2": v2}, each parameter passed on once it is complete.
//
// Not thread-safe; one per call.
#pragma once

#include <string>
#include <string_view>

#include "core/tool_calls/call_sink.h"
#include "core/tool_calls/parameter_value.h"

namespace radixserve::tool_calls {

class ParameterObject {
 public:
  explicit ParameterObject(CallSink* sink) : sink_(sink) {}

  // A parameter and its value's JSON text.
  void Add(std::string_view name, std::string_view json_value) {
    Open();
    sink_->AppendArguments(JsonString(name) + ": ");
    sink_->AppendArguments(json_value);
  }
  // A parameter whose value the end of the output cut off: an unclosed string.
  void AddCut(std::string_view name, std::string_view partial_value) {
    Open();
    std::string s = JsonString(partial_value);
    s.pop_back();  // the closing quote
    sink_->AppendArguments(JsonString(name) + ": " + s);
  }
  // Closes the object ("{}" when no parameter came).
  void Close() { sink_->AppendArguments(count_ == 0 ? "{}" : "}"); }
  // The object as far as it is written, left open ("{" when no parameter came).
  void LeaveOpen() {
    if (count_ == 0) sink_->AppendArguments("{");
  }

 private:
  void Open() { sink_->AppendArguments(count_++ == 0 ? "{" : ", "); }

  CallSink* sink_;
  int count_ = 0;
};

}  // namespace radixserve::tool_calls
