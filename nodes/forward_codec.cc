#include "nodes/forward_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace radixserve::nodes {

using transport::ActivationsMsg;
using transport::ForwardBatchMsg;
using transport::ForwardReqWire;
using transport::ForwardResultMsg;
using transport::MessageWriter;

static_assert(std::is_trivially_copyable_v<ForwardReqWire>, "zeroed with memset, read from shared memory");

size_t ForwardBatchBytes(const sched::ForwardBatch& b) {
  return ForwardBatchMsg::Bytes({.reqs = b.reqs.size(),
                                 .tokens = b.input_ids.size(),
                                 .prefix_slots = b.prefix_slots.size(),
                                 .released_rids = b.released_rids.size(),
                                 .history_ids = b.history_ids.size(),
                                 .grammar_bytes = b.grammar_text.size()});
}

Status EncodeForwardBatch(const sched::ForwardBatch& b, void* buf, size_t cap) {
  MessageWriter<ForwardBatchMsg> w(buf, cap);
  ForwardBatchMsg* m = w.msg();
  m->batch_id = b.batch_id;
  m->mode = static_cast<uint8_t>(b.mode);
  auto reqs = w.Append<ForwardReqWire>(m->reqs, b.reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const sched::ForwardReq& r = b.reqs[i];
    ForwardReqWire& o = reqs[i];
    std::memset(static_cast<void*>(&o), 0, sizeof(o));  // padding too: shared memory carries no stale bytes
    o.rid = r.rid;
    o.row = r.row;
    o.sync_begin = r.sync_begin;
    o.prefix_offset = r.prefix_offset;
    o.prefix_len = r.prefix_len;
    o.extend_len = r.extend_len;
    o.token_offset = r.token_offset;
    o.sample = r.sample;
    o.return_logprob = r.return_logprob;
    o.top_logprobs_num = r.top_logprobs_num;
    o.new_state = r.new_state;
    o.history_offset = static_cast<uint32_t>(r.history_offset);
    o.history_len = static_cast<uint32_t>(r.history_len);
    o.grammar_kind = static_cast<uint8_t>(r.grammar_kind);
    o.grammar_offset = static_cast<uint32_t>(r.grammar_offset);
    o.grammar_len = static_cast<uint32_t>(r.grammar_len);
    o.output_begin = r.output_begin;
    o.sampling = r.sampling;
  }
  w.template Copy<int32_t>(m->input_ids, b.input_ids);
  w.template Copy<int32_t>(m->out_cache_loc, b.out_cache_loc);
  w.template Copy<int32_t>(m->prefix_slots, b.prefix_slots);
  w.template Copy<uint64_t>(m->released_rids, b.released_rids);
  w.template Copy<int32_t>(m->history_ids, b.history_ids);
  w.template Copy<char>(m->grammar_text, b.grammar_text);
  if (w.overflow())
    return Status::OutOfRange("forward batch of " + std::to_string(ForwardBatchBytes(b)) +
                              " bytes does not fit a " + std::to_string(cap) + "-byte chunk");
  return Status::Ok();
}

void DecodeForwardBatch(const ForwardBatchMsg* m, sched::ForwardBatch* b) {
  b->Clear();
  b->batch_id = m->batch_id;
  b->mode = static_cast<sched::ForwardMode>(m->mode);
  auto reqs = transport::ArrayOf<ForwardReqWire>(m, m->reqs);
  b->reqs.resize(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const ForwardReqWire& o = reqs[i];
    sched::ForwardReq& r = b->reqs[i];
    r.rid = o.rid;
    r.row = o.row;
    r.sync_begin = o.sync_begin;
    r.prefix_offset = o.prefix_offset;
    r.prefix_len = o.prefix_len;
    r.extend_len = o.extend_len;
    r.token_offset = o.token_offset;
    r.sample = o.sample != 0;
    r.return_logprob = o.return_logprob != 0;
    r.top_logprobs_num = o.top_logprobs_num;
    r.new_state = o.new_state != 0;
    r.history_offset = static_cast<int32_t>(o.history_offset);
    r.history_len = static_cast<int32_t>(o.history_len);
    r.grammar_kind = static_cast<grammar::GrammarKind>(o.grammar_kind);
    r.grammar_offset = static_cast<int32_t>(o.grammar_offset);
    r.grammar_len = static_cast<int32_t>(o.grammar_len);
    r.output_begin = o.output_begin;
    r.sampling = o.sampling;
  }
  auto copy = [m](const transport::ArrayRef& ref, auto* out) {
    using E = typename std::remove_pointer_t<decltype(out)>::value_type;
    auto span = transport::ArrayOf<E>(m, ref);
    out->assign(span.begin(), span.end());
  };
  copy(m->input_ids, &b->input_ids);
  copy(m->out_cache_loc, &b->out_cache_loc);
  copy(m->prefix_slots, &b->prefix_slots);
  copy(m->released_rids, &b->released_rids);
  copy(m->history_ids, &b->history_ids);
  copy(m->grammar_text, &b->grammar_text);
}

size_t ForwardResultBytes(const sched::ForwardResult& r, const Status& status) {
  return ForwardResultMsg::Bytes(
      {.reqs = r.next_token_ids.size(),
       .logprobs = r.logprobs.size(),
       .top = r.top_ids.size(),
       .error_bytes = status.ok() ? 0 : std::min(status.message().size(), ForwardResultMsg::kMaxErrorBytes)});
}

Status EncodeForwardResult(const sched::ForwardResult& r, const Status& status, void* buf, size_t cap) {
  MessageWriter<ForwardResultMsg> w(buf, cap);
  ForwardResultMsg* m = w.msg();
  m->batch_id = r.batch_id;
  m->status_code = static_cast<int32_t>(status.code());
  m->top_n = r.top_ids.empty() ? 0 : r.top_n;
  m->request_states = r.request_states < 0 ? UINT32_MAX : static_cast<uint32_t>(r.request_states);
  w.template Copy<int32_t>(m->next_token_ids, r.next_token_ids);
  w.template Copy<float>(m->logprobs, r.logprobs);
  w.template Copy<int32_t>(m->top_ids, r.top_ids);
  w.template Copy<float>(m->top_logprobs, r.top_logprobs);
  if (!status.ok()) {
    std::string_view msg(status.message());
    msg = msg.substr(0, ForwardResultMsg::kMaxErrorBytes);
    w.template Copy<char>(m->error, std::span<const char>(msg.data(), msg.size()));
  }
  if (w.overflow()) return Status::OutOfRange("forward result does not fit its chunk");
  return Status::Ok();
}

size_t ActivationsBytes(size_t floats, const Status& status) {
  return ActivationsMsg::Bytes(
      {.floats = status.ok() ? floats : 0,
       .error_bytes = status.ok() ? 0 : std::min(status.message().size(), ActivationsMsg::kMaxErrorBytes)});
}

Status EncodeActivations(uint64_t batch_id, uint32_t dim, std::span<const float> hidden, const Status& status,
                         void* buf, size_t cap) {
  MessageWriter<ActivationsMsg> w(buf, cap);
  ActivationsMsg* m = w.msg();
  m->batch_id = batch_id;
  m->status_code = static_cast<int32_t>(status.code());
  m->dim = dim;
  if (status.ok()) {
    w.template Copy<float>(m->hidden, hidden);
  } else {
    std::string_view msg(status.message());
    msg = msg.substr(0, ActivationsMsg::kMaxErrorBytes);
    w.template Copy<char>(m->error, std::span<const char>(msg.data(), msg.size()));
  }
  if (w.overflow()) return Status::OutOfRange("activations do not fit their chunk");
  return Status::Ok();
}

Status ActivationsStatus(const ActivationsMsg* m) {
  if (m->status_code == 0) return Status::Ok();
  auto err = transport::ArrayOf<char>(m, m->error);
  return Status(static_cast<StatusCode>(m->status_code), std::string(err.begin(), err.end()));
}

Status DecodeForwardResult(const ForwardResultMsg* m, sched::ForwardResult* r) {
  r->batch_id = m->batch_id;
  auto ids = transport::ArrayOf<int32_t>(m, m->next_token_ids);
  r->next_token_ids.assign(ids.begin(), ids.end());
  auto lp = transport::ArrayOf<float>(m, m->logprobs);
  r->logprobs.assign(lp.begin(), lp.end());
  r->top_n = m->top_n;
  r->request_states = m->request_states > INT32_MAX ? -1 : static_cast<int32_t>(m->request_states);
  auto ti = transport::ArrayOf<int32_t>(m, m->top_ids);
  r->top_ids.assign(ti.begin(), ti.end());
  auto tl = transport::ArrayOf<float>(m, m->top_logprobs);
  r->top_logprobs.assign(tl.begin(), tl.end());
  if (m->status_code != 0) {
    auto err = transport::ArrayOf<char>(m, m->error);
    return Status(static_cast<StatusCode>(m->status_code), "worker: " + std::string(err.begin(), err.end()));
  }
  return Status::Ok();
}

}  // namespace radixserve::nodes
