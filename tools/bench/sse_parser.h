// SseParser: splits a Server-Sent Events byte stream into event payloads.
//
// Bytes may arrive cut anywhere (inside a line, between \r and \n); each
// complete event's data (its "data:" lines joined with '\n') is handed to
// the callback once its terminating blank line has arrived. Comments and
// other fields (event:, id:, retry:) are ignored. Not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace radixserve::bench {

class SseParser {
 public:
  using EventCallback = std::function<void(std::string_view data)>;

  void Feed(std::string_view bytes, const EventCallback& on_event);
  // Delivers an event left unterminated when the stream ended; call once at the end.
  void Finish(const EventCallback& on_event);

 private:
  void Line(std::string_view line, const EventCallback& on_event);

  std::string line_;   // the current incomplete line
  std::string data_;   // data lines of the current event
  bool has_data_ = false;
  bool pending_cr_ = false;  // the last byte was '\r': a following '\n' belongs to it
};

}  // namespace radixserve::bench
