#include "nodes/request_codec.h"

#include <cstring>

#include "core/grammar/grammar_spec.h"

namespace radixserve::nodes {

// The transport checks grammar kinds against its own bound: the last kind must be it.
static_assert(static_cast<uint8_t>(grammar::GrammarKind::kStructural) == transport::kMaxGrammarKind);

using transport::TokenizedRequestMsg;

namespace {
size_t StopBytes(const sched::TokenizedRequest& r) {
  size_t n = 0;
  for (const auto& s : r.stop_strs) n += s.size();
  return n;
}
}  // namespace

size_t TokenizedRequestBytes(const sched::TokenizedRequest& r) {
  return TokenizedRequestMsg::Bytes({.input_ids = r.input_ids.size(),
                                     .stop_token_ids = r.stop_token_ids.size(),
                                     .stop_str_bytes = StopBytes(r),
                                     .stop_strs = r.stop_strs.size(),
                                     .cache_salt_bytes = r.cache_salt.size(),
                                     .routing_key_bytes = r.routing_key.size(),
                                     .grammar_bytes = r.grammar.text.size()});
}

Status EncodeTokenizedRequest(const sched::TokenizedRequest& r, double arrival_time, void* buf, size_t cap) {
  transport::MessageWriter<TokenizedRequestMsg> w(buf, cap);
  TokenizedRequestMsg* m = w.msg();
  m->rid = r.rid;
  m->sampling = r.sampling;
  m->stream = r.stream;
  m->return_logprob = r.return_logprob;
  m->has_priority = r.priority.has_value();
  m->priority = r.priority.value_or(0);
  m->top_logprobs_num = r.top_logprobs_num;
  m->grammar_kind = static_cast<uint8_t>(r.grammar.kind);
  m->arrival_time = arrival_time;
  w.Copy<int32_t>(m->input_ids, r.input_ids);
  w.Copy<int32_t>(m->stop_token_ids, r.stop_token_ids);
  auto bytes = w.Append<char>(m->stop_str_bytes, StopBytes(r));
  auto lens = w.Append<uint32_t>(m->stop_str_lens, r.stop_strs.size());
  w.Copy<char>(m->cache_salt, std::span<const char>(r.cache_salt.data(), r.cache_salt.size()));
  w.Copy<char>(m->routing_key, std::span<const char>(r.routing_key.data(), r.routing_key.size()));
  w.Copy<char>(m->grammar_text, std::span<const char>(r.grammar.text.data(), r.grammar.text.size()));
  if (w.overflow())
    return Status::OutOfRange("request of " + std::to_string(TokenizedRequestBytes(r)) + " bytes does not fit a " +
                              std::to_string(cap) + "-byte chunk");
  size_t pos = 0;
  for (size_t i = 0; i < r.stop_strs.size(); ++i) {
    std::memcpy(bytes.data() + pos, r.stop_strs[i].data(), r.stop_strs[i].size());
    pos += r.stop_strs[i].size();
    lens[i] = static_cast<uint32_t>(r.stop_strs[i].size());
  }
  return Status::Ok();
}

void DecodeTokenizedRequest(const TokenizedRequestMsg* m, sched::TokenizedRequest* r) {
  r->rid = m->rid;
  auto ids = transport::ArrayOf<int32_t>(m, m->input_ids);
  r->input_ids.assign(ids.begin(), ids.end());
  r->sampling = m->sampling;
  auto stop_ids = transport::ArrayOf<int32_t>(m, m->stop_token_ids);
  r->stop_token_ids.assign(stop_ids.begin(), stop_ids.end());
  auto bytes = transport::ArrayOf<char>(m, m->stop_str_bytes);
  r->stop_strs.clear();
  size_t pos = 0;
  for (uint32_t len : transport::ArrayOf<uint32_t>(m, m->stop_str_lens)) {
    r->stop_strs.emplace_back(bytes.data() + pos, len);
    pos += len;
  }
  r->stream = m->stream != 0;
  r->return_logprob = m->return_logprob != 0;
  r->top_logprobs_num = m->top_logprobs_num;
  r->priority.reset();
  if (m->has_priority) r->priority = m->priority;
  auto salt = transport::ArrayOf<char>(m, m->cache_salt);
  r->cache_salt.assign(salt.begin(), salt.end());
  auto key = transport::ArrayOf<char>(m, m->routing_key);
  r->routing_key.assign(key.begin(), key.end());
  r->grammar.kind = static_cast<grammar::GrammarKind>(m->grammar_kind);
  auto text = transport::ArrayOf<char>(m, m->grammar_text);
  r->grammar.text.assign(text.begin(), text.end());
}

}  // namespace radixserve::nodes
