#include "tools/bench/sse_parser.h"

namespace radixserve::bench {

void SseParser::Feed(std::string_view bytes, const EventCallback& on_event) {
  for (size_t i = 0; i < bytes.size();) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    size_t end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(i));
      return;
    }
    if (line_.empty()) {
      Line(bytes.substr(i, end - i), on_event);
    } else {
      line_.append(bytes.substr(i, end - i));
      std::string line = std::move(line_);
      line_.clear();
      Line(line, on_event);
    }
    pending_cr_ = bytes[end] == '\r';
    i = end + 1;
  }
}

void SseParser::Finish(const EventCallback& on_event) {
  if (!line_.empty()) {
    std::string line = std::move(line_);
    line_.clear();
    Line(line, on_event);
  }
  Line("", on_event);
}

void SseParser::Line(std::string_view line, const EventCallback& on_event) {
  if (line.empty()) {  // end of an event
    if (has_data_) on_event(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.substr(0, 5) != "data:") return;  // comments and other fields
  line.remove_prefix(5);
  if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(line);
  has_data_ = true;
}

}  // namespace radixserve::bench
