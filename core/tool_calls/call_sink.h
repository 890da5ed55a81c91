// CallSink: where the readers of call markup report the calls they find, as they find them.
//
// The parsers implement it (core/tool_calls/parser_core.h); the readers (JSON, XML parameters,
// Gemma arguments) call it. A call is begun once its name is known, its arguments arrive in
// fragments whose concatenation is the arguments text, and it is ended once. Interface only.
#pragma once

#include <string>
#include <string_view>

namespace radixserve::tool_calls {

class CallSink {
 public:
  virtual ~CallSink() = default;
  virtual void BeginCall(std::string id, std::string name) = 0;
  virtual void AppendArguments(std::string_view fragment) = 0;
  // For formats that write the id after the arguments.
  virtual void SetCallId(std::string id) = 0;
  virtual void EndCall() = 0;
};

}  // namespace radixserve::tool_calls
