#include "core/tool_calls/text_channel.h"

namespace radixserve::tool_calls {
namespace {

constexpr std::string_view kWs = " \t\n\r";

}  // namespace

void TextChannel::Add(std::string_view text, std::string* out) {
  size_t first = text.find_first_not_of(kWs);
  if (first == std::string_view::npos) {
    held_ws_.append(text);
    return;
  }
  held_ws_.append(text.substr(0, first));
  if (!after_markup_ || has_text_) out->append(held_ws_);
  held_ws_.clear();
  size_t last = text.find_last_not_of(kWs);
  out->append(text.substr(first, last + 1 - first));
  held_ws_.assign(text.substr(last + 1));
  has_text_ = true;
  after_markup_ = false;
}

void TextChannel::Finish(std::string* out) {
  if (!after_markup_) out->append(held_ws_);
  held_ws_.clear();
}

}  // namespace radixserve::tool_calls
