// The families that write each parameter as markup around its raw value:
//   Qwen3-Coder, Qwen3.5  <tool_call>\n<function=N>\n<parameter=P>\nvalue\n</parameter>\n</function>\n</tool_call>
//   MiniCPM5              <function name="N"><param name="P">value</param></function>, a value holding
//                         <, & or a newline wrapped in <![CDATA[...]]>
// They differ only in their literals, so one class serves both, configured per family below. The
// arguments object is assembled here (parameter_object.h), each value typed by ParameterValueJson
// (a CDATA value is always a string), and passed on parameter by parameter.
#include <optional>
#include <string>

#include "core/tool_calls/call_name.h"
#include "core/tool_calls/family_parsers.h"
#include "core/tool_calls/markup_parser.h"
#include "core/tool_calls/parameter_object.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kCdataOpen = "<![CDATA[";
constexpr std::string_view kCdataClose = "]]>";

class XmlCallParser final : public MarkupParser {
 public:
  struct Syntax {
    Markers markers;
    std::string_view function_open;   // what follows the trigger before the name ("" when the trigger ends with it)
    std::string_view name_end;        // after a function or parameter name
    std::string_view param_open;
    std::string_view param_close;
    std::string_view function_close;
    std::string_view block_close;     // after function_close ("" when none)
    bool newline_around_value;        // one "\n" after the parameter's name_end and before param_close
    bool cdata;                       // values may be <![CDATA[...]]>
  };

  XmlCallParser(Syntax syntax, bool starts_in_reasoning)
      : MarkupParser(syntax.markers, starts_in_reasoning), syntax_(std::move(syntax)) {}

 private:
  enum class Stage : uint8_t {
    kFunctionOpen, kFunctionName, kParams, kParamName, kValueStart, kValue, kCdata, kCdataClose, kBlockClose
  };

  void BeginMarkup(size_t trigger) override {
    stage_ = syntax_.function_open.empty() ? Stage::kFunctionName : Stage::kFunctionOpen;
    params_.reset();
  }

  bool ReadMarkup() override {
    size_t length = 0;
    size_t which = 0;
    switch (stage_) {
      case Stage::kFunctionOpen:
        switch (MatchAfterSpace(Unread(), syntax_.function_open, at_end(), &length)) {
          case Prefix::kYes:
            Skip(length);
            stage_ = Stage::kFunctionName;
            return true;
          case Prefix::kNo:
            Reject(markup_start(), pos());
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      case Stage::kFunctionName:
      case Stage::kParamName: {
        std::optional<std::string> name;
        if (!ReadName(stage_ == Stage::kFunctionName, &name)) return false;
        if (!name) return true;  // faulted
        if (stage_ == Stage::kParamName) {
          param_ = std::move(*name);
          stage_ = Stage::kValueStart;
          return true;
        }
        BeginCall("", std::move(*name));
        Release();  // from here on the markup is never handed back as content
        params_.emplace(sink());
        stage_ = Stage::kParams;
        return true;
      }
      case Stage::kParams:
        switch (MatchMarkup({syntax_.param_open, syntax_.function_close}, &which, &length)) {
          case Prefix::kYes:
            Skip(length);
            if (which == 0) {
              stage_ = Stage::kParamName;
            } else {
              params_->Close();
              EndCall();
              stage_ = Stage::kBlockClose;
            }
            return true;
          case Prefix::kNo:
            CloseAfterFault(pos());
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      case Stage::kValueStart:
        value_.clear();
        if (syntax_.cdata) {
          std::string_view unread = Unread();
          if (unread.starts_with(kCdataOpen)) {
            Skip(kCdataOpen.size());
            stage_ = Stage::kCdata;
            return true;
          }
          if (!at_end() && kCdataOpen.starts_with(unread)) return false;
        }
        stage_ = Stage::kValue;
        return true;
      case Stage::kValue:
      case Stage::kCdata: {
        std::string_view close = stage_ == Stage::kValue ? syntax_.param_close : kCdataClose;
        std::string_view unread = Unread();
        MarkerMatch m = FindMarker(unread, {close}, at_end());
        if (!m.found) {
          value_.append(unread.substr(0, m.safe));
          Skip(m.safe);
          return m.safe > 0;
        }
        value_.append(unread.substr(0, m.at));
        Skip(m.at + close.size());
        if (stage_ == Stage::kCdata) {
          stage_ = Stage::kCdataClose;
          return true;
        }
        params_->Add(param_, ParameterValueJson(TrimValue()));
        stage_ = Stage::kParams;
        return true;
      }
      case Stage::kCdataClose:
        switch (MatchMarkup(syntax_.param_close, &length)) {
          case Prefix::kYes:
            Skip(length);
            params_->Add(param_, JsonString(value_));
            stage_ = Stage::kParams;
            return true;
          case Prefix::kNo:
            params_->Add(param_, JsonString(value_));
            CloseAfterFault(pos());
            return true;
          case Prefix::kMaybe:
            return false;
        }
        return false;
      case Stage::kBlockClose:
        if (syntax_.block_close.empty()) {
          ResumeContent(pos());
          return true;
        }
        return CloseBlock(syntax_.block_close);
    }
    return false;
  }

  // Reads a name up to syntax_.name_end. Returns false when it needs more text; on a byte that
  // cannot be part of the name, faults and leaves `*name` empty.
  bool ReadName(bool function, std::optional<std::string>* name) {
    std::string_view unread = Unread();
    size_t n = 0;
    if (function) {
      n = CallNameLength(unread);
    } else {  // parameter names: anything short of markup or a line break
      while (n < unread.size() && unread[n] != '<' && unread[n] != '>' && unread[n] != '"' && unread[n] != '\n') ++n;
    }
    // Before the call began, markup cut off by the end of the output is text (Reject); a parameter
    // name cut off is left to EndOfOutputInMarkup.
    bool wait = !at_end() || !function;
    bool ok = true;
    if (n == unread.size()) {
      if (n <= kMaxCallNameLength && wait) return false;
      ok = false;
    } else {
      std::string_view rest = unread.substr(n);
      if (!rest.starts_with(syntax_.name_end)) {
        if (wait && syntax_.name_end.starts_with(rest)) return false;
        ok = false;
      }
    }
    if (!ok || n == 0 || n > kMaxCallNameLength) {
      if (function) {
        Reject(markup_start(), pos() + n);
      } else {
        CloseAfterFault(pos() + n);
      }
      return true;
    }
    *name = std::string(unread.substr(0, n));
    Skip(n + syntax_.name_end.size());
    return true;
  }

  // The value without the newlines the template puts around it.
  std::string_view TrimValue() const {
    std::string_view v = value_;
    if (syntax_.newline_around_value) {
      if (v.starts_with('\n')) v.remove_prefix(1);
      if (v.ends_with('\n')) v.remove_suffix(1);
    }
    return v;
  }

  // The markup went wrong after the call began: the call ends with the parameters read, and the
  // text from `fault` on is content.
  void CloseAfterFault(size_t fault) {
    params_->Close();
    EndCall();
    ResumeContent(fault);
  }

  void EndOfOutputInMarkup() override {
    switch (stage_) {
      case Stage::kFunctionOpen:
      case Stage::kFunctionName:
        Reject(markup_start(), end());
        return;
      case Stage::kBlockClose:
        ResumeContent(end());  // what is left is space or a closing tag cut short
        return;
      default:
        break;
    }
    // Within the call's parameters (see output_parser.h): a cut output leaves the object open
    // with a partial value as an unclosed string; any other end closes it. A closing tag cut
    // short is dropped.
    if (stage_ == Stage::kCdataClose) params_->Add(param_, JsonString(value_));
    bool in_value = stage_ == Stage::kValue || stage_ == Stage::kCdata;
    if (cut_by_length()) {
      if (in_value) {
        std::string_view v = value_;
        if (syntax_.newline_around_value && v.starts_with('\n')) v.remove_prefix(1);
        params_->AddCut(param_, v);
      }
      params_->LeaveOpen();
    } else {
      if (in_value) params_->Add(param_, stage_ == Stage::kValue ? ParameterValueJson(TrimValue()) : JsonString(value_));
      params_->Close();
    }
    EndCall();
    ResumeContent(end());
  }

  Syntax syntax_;
  Stage stage_ = Stage::kFunctionName;
  std::optional<ParameterObject> params_;
  std::string param_;
  std::string value_;
};

}  // namespace

std::unique_ptr<OutputParser> MakeQwen3CoderParser(bool starts_in_reasoning) {
  return std::make_unique<XmlCallParser>(
      XmlCallParser::Syntax{MarkupParser::FamilyMarkers(ToolCallFamily::kQwen3Coder), "<function=", ">", "<parameter=",
                            "</parameter>", "</function>", "</tool_call>", /*newline_around_value=*/true,
                            /*cdata=*/false},
      starts_in_reasoning);
}

std::unique_ptr<OutputParser> MakeMiniCpm5Parser(bool starts_in_reasoning) {
  // The trigger, <function name=", ends where the name begins.
  return std::make_unique<XmlCallParser>(
      XmlCallParser::Syntax{MarkupParser::FamilyMarkers(ToolCallFamily::kMiniCpm5), "", "\">", "<param name=\"",
                            "</param>", "</function>", "", /*newline_around_value=*/false, /*cdata=*/true},
      starts_in_reasoning);
}

}  // namespace radixserve::tool_calls
