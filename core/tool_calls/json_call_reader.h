// JsonCallReader: reads tool calls written as JSON and streams each call's arguments as they are
// generated.
//
// Three shapes:
//   kCallObject  {"name": N, "arguments": {...}}                         (Hermes, Llama 3)
//   kCallList    [{...}, {...}], or one call object alone                 (Mistral Nemo, firefunction,
//                                                                          Granite, Command R7B)
//   kArguments   the arguments object alone, for a call the caller names  (Mistral Small, functionary,
//                                                                          DeepSeek R1)
// In a call object the name is "name" or "tool_name", the arguments "arguments" or "parameters",
// the id "id" or "tool_call_id", in any order; other keys are ignored. A call begins once its name
// has been read (kArguments: once the arguments' first byte is seen); arguments written before the
// name are held until then, those after it are passed on as they arrive, byte for byte as the model
// wrote them. Arguments written as a JSON string holding an object (encoded twice) are decoded, once
// whole. A call object without arguments gets "{}".
//
// `strict` (Llama 3's bare JSON, which must be told from a JSON answer): the object may hold only
// the name, then the arguments (an object, or a string), and "type"; the call begins at the
// arguments.
//
// Offsets are counted from the first byte given to Read. Not thread-safe; one reader per value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/tool_calls/call_sink.h"
#include "core/tool_calls/json_scanner.h"

namespace radixserve::tool_calls {

class JsonCallReader {
 public:
  enum class Shape : uint8_t { kCallObject, kCallList, kArguments };
  enum class State : uint8_t { kReading, kDone, kFailed };

  // kArguments calls are begun with `name` and `id`.
  JsonCallReader(Shape shape, bool strict, CallSink* sink, std::string name = {}, std::string id = {});

  // Reads the text that follows what was read before.
  State Read(std::string_view text);
  // End of the output with the value unfinished: a begun call ends with the arguments so far.
  void EndOfOutput();

  State state() const { return state_; }
  size_t end() const { return end_; }                  // kDone: one past the value's last byte
  size_t fail_offset() const { return fail_offset_; }  // kFailed: the first byte that is not part of a call
  // kFailed: where the text that carried no call begins, to be returned as content: 0 when no call
  // began, else the start of the call object that failed or (a begun call failed) fail_offset().
  size_t unclaimed_from() const { return unclaimed_from_; }
  bool began_call() const { return began_any_; }
  bool in_call() const { return in_call_; }

 private:
  enum class Member : uint8_t { kNone, kName, kArguments, kId, kOther };

  void Handle(const JsonScanner::Event& e);
  void HandleCallObjectEvent(const JsonScanner::Event& e);
  void Commit();
  void Fail(size_t offset);
  // Sends the streamed arguments up to `end`.
  void FlushArguments(size_t end);

  Shape shape_;
  bool strict_;
  CallSink* sink_;
  JsonScanner scanner_;
  std::vector<JsonScanner::Event> events_;
  std::string text_;  // everything read
  State state_ = State::kReading;
  size_t end_ = 0;
  size_t fail_offset_ = 0;
  size_t unclaimed_from_ = 0;
  int call_depth_ = 0;  // the depth of call objects (1 inside a list)
  bool began_any_ = false;
  bool in_call_ = false;

  // The call object being read.
  bool in_object_ = false;
  size_t object_begin_ = 0;
  size_t key_begin_ = 0;
  std::string key_;
  Member member_ = Member::kNone;
  size_t value_begin_ = 0;
  JsonScanner::Kind value_kind_ = JsonScanner::Kind::kObject;
  std::string name_;
  std::string id_;
  bool have_name_ = false;
  bool id_sent_ = false;
  bool have_arguments_ = false;
  std::string held_arguments_;  // arguments read before the name
  bool streaming_ = false;      // passing the arguments on as they arrive
  bool open_string_arguments_ = false;  // in a begun call's arguments written as a string
  size_t streamed_to_ = 0;
};

}  // namespace radixserve::tool_calls
