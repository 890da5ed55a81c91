#include "nodes/request_codec.h"

#include <cstring>

#include "core/grammar/grammar_spec.h"
#include "core/request/request_spec.h"

namespace radixserve::nodes {

// The transport checks grammar kinds against its own bound: the last kind must be it.
static_assert(static_cast<uint8_t>(grammar::GrammarKind::kStructural) == transport::kMaxGrammarKind);

using transport::TokenizedRequestMsg;

namespace {
size_t StopBytes(const RequestSpec& s) {
  size_t n = 0;
  for (const auto& str : s.stop_strs) n += str.size();
  return n;
}

// The spec's half of the message: its scalar fields and its arrays, appended after the input ids.
// False when an array did not fit (the writer's overflow says the same).
bool EncodeSpec(const RequestSpec& s, transport::MessageWriter<TokenizedRequestMsg>& w) {
  TokenizedRequestMsg* m = w.msg();
  m->sampling = s.sampling;
  m->stream = s.stream;
  m->return_logprob = s.return_logprob;
  m->has_priority = s.priority.has_value();
  m->priority = s.priority.value_or(0);
  m->top_logprobs_num = s.top_logprobs_num;
  m->grammar_kind = static_cast<uint8_t>(s.grammar.kind);
  w.Copy<int32_t>(m->stop_token_ids, s.stop_token_ids);
  auto bytes = w.Append<char>(m->stop_str_bytes, StopBytes(s));
  auto lens = w.Append<uint32_t>(m->stop_str_lens, s.stop_strs.size());
  w.Copy<char>(m->cache_salt, std::span<const char>(s.cache_salt.data(), s.cache_salt.size()));
  w.Copy<char>(m->routing_key, std::span<const char>(s.routing_key.data(), s.routing_key.size()));
  w.Copy<char>(m->grammar_text, std::span<const char>(s.grammar.text.data(), s.grammar.text.size()));
  if (w.overflow()) return false;
  size_t pos = 0;
  for (size_t i = 0; i < s.stop_strs.size(); ++i) {
    std::memcpy(bytes.data() + pos, s.stop_strs[i].data(), s.stop_strs[i].size());
    pos += s.stop_strs[i].size();
    lens[i] = static_cast<uint32_t>(s.stop_strs[i].size());
  }
  return true;
}

// Reads what EncodeSpec wrote, reusing *s's storage.
void DecodeSpec(const TokenizedRequestMsg* m, RequestSpec* s) {
  s->sampling = m->sampling;
  auto stop_ids = transport::ArrayOf<int32_t>(m, m->stop_token_ids);
  s->stop_token_ids.assign(stop_ids.begin(), stop_ids.end());
  auto bytes = transport::ArrayOf<char>(m, m->stop_str_bytes);
  s->stop_strs.clear();
  size_t pos = 0;
  for (uint32_t len : transport::ArrayOf<uint32_t>(m, m->stop_str_lens)) {
    s->stop_strs.emplace_back(bytes.data() + pos, len);
    pos += len;
  }
  s->stream = m->stream != 0;
  s->return_logprob = m->return_logprob != 0;
  s->top_logprobs_num = m->top_logprobs_num;
  s->priority.reset();
  if (m->has_priority) s->priority = m->priority;
  auto salt = transport::ArrayOf<char>(m, m->cache_salt);
  s->cache_salt.assign(salt.begin(), salt.end());
  auto key = transport::ArrayOf<char>(m, m->routing_key);
  s->routing_key.assign(key.begin(), key.end());
  s->grammar.kind = static_cast<grammar::GrammarKind>(m->grammar_kind);
  auto text = transport::ArrayOf<char>(m, m->grammar_text);
  s->grammar.text.assign(text.begin(), text.end());
}
}  // namespace

size_t TokenizedRequestBytes(const sched::TokenizedRequest& r) {
  const RequestSpec& s = r.spec;
  return TokenizedRequestMsg::Bytes({.input_ids = r.input_ids.size(),
                                     .stop_token_ids = s.stop_token_ids.size(),
                                     .stop_str_bytes = StopBytes(s),
                                     .stop_strs = s.stop_strs.size(),
                                     .cache_salt_bytes = s.cache_salt.size(),
                                     .routing_key_bytes = s.routing_key.size(),
                                     .grammar_bytes = s.grammar.text.size()});
}

Status EncodeTokenizedRequest(const sched::TokenizedRequest& r, double arrival_time, void* buf, size_t cap) {
  transport::MessageWriter<TokenizedRequestMsg> w(buf, cap);
  TokenizedRequestMsg* m = w.msg();
  m->rid = r.rid;
  m->arrival_time = arrival_time;
  w.Copy<int32_t>(m->input_ids, r.input_ids);
  if (!EncodeSpec(r.spec, w))
    return Status::OutOfRange("request of " + std::to_string(TokenizedRequestBytes(r)) + " bytes does not fit a " +
                              std::to_string(cap) + "-byte chunk");
  return Status::Ok();
}

void DecodeTokenizedRequest(const TokenizedRequestMsg* m, sched::TokenizedRequest* r) {
  r->rid = m->rid;
  auto ids = transport::ArrayOf<int32_t>(m, m->input_ids);
  r->input_ids.assign(ids.begin(), ids.end());
  DecodeSpec(m, &r->spec);
}

}  // namespace radixserve::nodes
