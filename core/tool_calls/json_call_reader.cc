#include "core/tool_calls/json_call_reader.h"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace radixserve::tool_calls {
namespace {

using Kind = JsonScanner::Kind;
using EventType = JsonScanner::EventType;

// The text of a JSON string literal the scanner accepted; nullopt for what nlohmann refuses (a lone
// surrogate escape).
std::optional<std::string> DecodeString(std::string_view literal) {
  auto j = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

// Arguments written as a JSON string: the object text it holds, or else the literal as written.
std::string ArgumentsFromString(std::string_view literal) {
  if (auto s = DecodeString(literal)) {
    auto j = nlohmann::json::parse(*s, nullptr, false);
    if (!j.is_discarded() && j.is_object()) return *s;
  }
  return std::string(literal);
}

}  // namespace

JsonCallReader::JsonCallReader(Shape shape, bool strict, CallSink* sink, std::string name, std::string id)
    : shape_(shape), strict_(strict), sink_(sink), name_(std::move(name)), id_(std::move(id)) {}

JsonCallReader::State JsonCallReader::Read(std::string_view text) {
  if (state_ != State::kReading) return state_;
  text_.append(text);
  events_.clear();
  scanner_.Scan(text, &events_);
  for (const auto& e : events_) {
    Handle(e);
    if (state_ != State::kReading) return state_;
  }
  if (scanner_.state() == JsonScanner::State::kFailed) {
    Fail(scanner_.error_offset());
  } else if (streaming_) {
    FlushArguments(scanner_.offset());
  }
  return state_;
}

void JsonCallReader::EndOfOutput() {
  if (state_ == State::kReading) Fail(text_.size());
}

void JsonCallReader::FlushArguments(size_t end) {
  if (end <= streamed_to_) return;
  sink_->AppendArguments(std::string_view(text_).substr(streamed_to_, end - streamed_to_));
  streamed_to_ = end;
}

void JsonCallReader::Commit() {
  sink_->BeginCall(id_, name_);
  in_call_ = true;
  began_any_ = true;
  id_sent_ = !id_.empty();
  if (!held_arguments_.empty()) sink_->AppendArguments(held_arguments_);
}

void JsonCallReader::Fail(size_t offset) {
  state_ = State::kFailed;
  fail_offset_ = offset;
  if (!began_any_) {
    unclaimed_from_ = 0;
  } else if (in_call_) {
    // The call keeps what it received; the rest is not part of it.
    if (streaming_) {
      FlushArguments(offset);
    } else if (open_string_arguments_) {
      sink_->AppendArguments(std::string_view(text_).substr(value_begin_, offset - value_begin_));
    }
    sink_->EndCall();
    in_call_ = false;
    unclaimed_from_ = offset;
  } else {
    unclaimed_from_ = in_object_ ? object_begin_ : offset;
  }
  streaming_ = false;
}

void JsonCallReader::Handle(const JsonScanner::Event& e) {
  if (shape_ == Shape::kArguments) {
    if (e.depth != 0) return;
    if (e.type == EventType::kValueBegin) {
      if (e.kind != Kind::kObject && e.kind != Kind::kString) return Fail(e.offset);
      sink_->BeginCall(id_, name_);
      in_call_ = began_any_ = true;
      value_begin_ = e.offset;
      value_kind_ = e.kind;
      if (e.kind == Kind::kObject) {
        streaming_ = true;
        streamed_to_ = e.offset;
      } else {
        open_string_arguments_ = true;
      }
    } else if (e.type == EventType::kValueEnd) {
      open_string_arguments_ = false;
      if (streaming_) {
        FlushArguments(e.offset);
        streaming_ = false;
      } else {
        sink_->AppendArguments(ArgumentsFromString(std::string_view(text_).substr(value_begin_, e.offset - value_begin_)));
      }
      sink_->EndCall();
      in_call_ = false;
      state_ = State::kDone;
      end_ = e.offset;
    }
    return;
  }
  if (e.depth == 0 && e.type == EventType::kValueBegin) {
    if (e.kind == Kind::kArray && shape_ == Shape::kCallList) {
      call_depth_ = 1;
      return;
    }
    call_depth_ = 0;  // a call object; anything else fails below
  }
  if (e.depth == call_depth_) {
    if (e.type == EventType::kValueBegin) {
      if (e.kind != Kind::kObject) return Fail(e.offset);
      in_object_ = true;
      object_begin_ = e.offset;
      member_ = Member::kNone;
      name_.clear();
      id_.clear();
      have_name_ = id_sent_ = have_arguments_ = false;
      held_arguments_.clear();
      return;
    }
    if (e.type == EventType::kValueEnd) {
      if (!in_call_) return Fail(e.offset);  // no name (strict: no arguments either)
      if (!have_arguments_) sink_->AppendArguments("{}");
      sink_->EndCall();
      in_call_ = in_object_ = false;
      if (call_depth_ == 0) {
        state_ = State::kDone;
        end_ = e.offset;
      }
      return;
    }
  }
  if (e.depth == 0 && e.type == EventType::kValueEnd) {  // the end of the list
    state_ = State::kDone;
    end_ = e.offset;
    return;
  }
  if (e.depth == call_depth_ + 1 && in_object_) HandleCallObjectEvent(e);
}

void JsonCallReader::HandleCallObjectEvent(const JsonScanner::Event& e) {
  switch (e.type) {
    case EventType::kKeyBegin:
      key_begin_ = e.offset;
      return;
    case EventType::kKeyEnd: {
      key_ = text_.substr(key_begin_ + 1, e.offset - key_begin_ - 2);
      if (key_ == "name" || key_ == "tool_name") {
        member_ = have_name_ ? Member::kOther : Member::kName;
      } else if (key_ == "arguments" || key_ == "parameters") {
        member_ = have_arguments_ ? Member::kOther : Member::kArguments;
      } else if (key_ == "id" || key_ == "tool_call_id") {
        member_ = Member::kId;
      } else {
        member_ = Member::kOther;
      }
      if (strict_) {
        // Only a call's keys, the name before the arguments ("type" is Llama 3.2's occasional
        // {"type": "function", "name": ...}).
        bool call_key = member_ == Member::kName || (member_ == Member::kArguments && have_name_) || key_ == "type";
        if (!call_key) return Fail(key_begin_);
      }
      return;
    }
    case EventType::kValueBegin:
      value_begin_ = e.offset;
      value_kind_ = e.kind;
      if (member_ == Member::kArguments) {
        if (strict_ && e.kind != Kind::kObject && e.kind != Kind::kString) return Fail(e.offset);
        have_arguments_ = true;
        if (strict_ && have_name_ && !in_call_) Commit();
        if (in_call_ && e.kind != Kind::kString) {
          streaming_ = true;
          streamed_to_ = e.offset;
        }
        open_string_arguments_ = in_call_ && e.kind == Kind::kString;
      }
      return;
    case EventType::kValueEnd: {
      std::string_view value = std::string_view(text_).substr(value_begin_, e.offset - value_begin_);
      Member member = member_;
      member_ = Member::kNone;
      if (member == Member::kName) {
        std::optional<std::string> name;
        if (value_kind_ == Kind::kString) name = DecodeString(value);
        if (!name || name->empty()) return Fail(value_begin_);
        name_ = std::move(*name);
        have_name_ = true;
        if (!strict_ && !in_call_) Commit();
      } else if (member == Member::kId) {
        std::string id = value_kind_ == Kind::kString ? DecodeString(value).value_or("") : std::string(value);
        if (id_.empty()) id_ = std::move(id);
        if (in_call_ && !id_sent_ && !id_.empty()) {
          sink_->SetCallId(id_);
          id_sent_ = true;
        }
      } else if (member == Member::kArguments) {
        open_string_arguments_ = false;
        if (streaming_) {
          FlushArguments(e.offset);
          streaming_ = false;
        } else {
          std::string args = value_kind_ == Kind::kString ? ArgumentsFromString(value) : std::string(value);
          if (in_call_) {
            sink_->AppendArguments(args);
          } else {
            held_arguments_ = std::move(args);
          }
        }
      }
      return;
    }
  }
}

}  // namespace radixserve::tool_calls
