#include "core/detokenizer/incremental_detokenizer.h"

namespace radixserve::detok {

IncrementalDetokenizer::State& IncrementalDetokenizer::Lookup(uint64_t rid, bool* created) {
  auto it = states_.find(rid);
  if (it != states_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    *created = false;
    return it->second;
  }
  if (states_.size() >= max_states_ && !lru_.empty()) {  // evict the least recently used request
    states_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(rid);
  State& s = states_[rid];
  s.lru = lru_.begin();
  *created = true;
  return s;
}

void IncrementalDetokenizer::Forget(uint64_t rid) {
  auto it = states_.find(rid);
  if (it == states_.end()) return;
  lru_.erase(it->second.lru);
  states_.erase(it);
}

std::string IncrementalDetokenizer::Step(const DetokInput& in) {
  bool created = false;
  State& s = Lookup(in.rid, &created);
  if (created) {
    size_t ro = static_cast<size_t>(std::max(0, in.read_offset));
    s.read = std::min(ro, in.new_ids.size());
    s.surr = 0;
  }
  s.ids.insert(s.ids.end(), in.new_ids.begin(), in.new_ids.end());

  size_t end = s.ids.size();
  if (in.finished && in.matched_stop_token && !in.no_stop_trim && end > s.read) --end;  // drop the stop token
  std::span<const int32_t> ids(s.ids);
  std::string surr_text = tokenizer_->DecodeWindow(ids.subspan(s.surr, s.read - s.surr), in.skip_special_tokens);
  std::string read_text = tokenizer_->DecodeWindow(ids.subspan(s.surr, end - s.surr), in.skip_special_tokens);
  // Context tokens can decode differently alone than before the new ones; only what follows counts.
  std::string new_text = read_text.size() >= surr_text.size() ? read_text.substr(surr_text.size()) : std::string();

  std::string out;
  if (!in.finished) {
    size_t complete = Utf8CompleteLength(new_text);
    if (!new_text.empty() && complete == new_text.size()) {
      s.text += new_text;  // commit: the window moves forward
      s.surr = s.read;
      s.read = end;
      out = s.text;
    } else {
      out = s.text + new_text.substr(0, complete);  // hold back an incomplete character
    }
  } else {
    out = s.text + new_text;
    if (!in.no_stop_trim && !in.matched_stop_str.empty()) {
      size_t pos = out.find(in.matched_stop_str);
      if (pos != std::string::npos) out.resize(pos);
    }
  }
  std::string delta = out.size() > s.sent ? out.substr(s.sent) : std::string();
  s.sent = std::max(s.sent, out.size());
  if (in.finished) Forget(in.rid);
  return delta;
}

}  // namespace radixserve::detok
