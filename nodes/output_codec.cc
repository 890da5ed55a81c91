#include "nodes/output_codec.h"

#include <algorithm>
#include <cstring>

namespace radixserve::nodes {

using transport::OutputEntry;

namespace {
// ids: the prompt tail (a request's first message) + new ids; text: the finish texts.
transport::BatchTokenIdOutMsg::Counts CountsOf(const sched::BatchTokenIdOut& batch) {
  transport::BatchTokenIdOutMsg::Counts c;
  c.entries = batch.outputs.size();
  for (const auto& o : batch.outputs) {
    c.ids += o.prompt_tail.size() + o.output_ids.size();
    c.out_ids += o.output_ids.size();
    c.logprobs += o.output_logprobs.size();
    c.top += o.top_ids.size();
    c.text_bytes += o.finish.matched_str.size() + o.finish.message.size();
  }
  return c;
}
}  // namespace

size_t BatchTokenIdOutBytes(const sched::BatchTokenIdOut& batch) {
  return transport::BatchTokenIdOutMsg::Bytes(CountsOf(batch));
}

Status EncodeBatchTokenIdOut(const sched::BatchTokenIdOut& batch, void* buf, size_t cap) {
  const transport::BatchTokenIdOutMsg::Counts c = CountsOf(batch);
  transport::MessageWriter<transport::BatchTokenIdOutMsg> w(buf, cap);
  auto* m = w.msg();
  auto entries = w.Append<OutputEntry>(m->entries, batch.outputs.size());
  auto ids = w.Append<int32_t>(m->ids, c.ids);
  auto out_ids = w.Append<int32_t>(m->out_ids, c.out_ids);
  auto lps = w.Append<float>(m->logprobs, c.logprobs);
  auto text = w.Append<char>(m->text, c.text_bytes);
  auto top_ids = w.Append<int32_t>(m->top_ids, c.top);
  auto top_lps = w.Append<float>(m->top_logprobs, c.top);
  if (w.overflow())  // nothing is written past the chunk
    return Status::OutOfRange("outputs of " + std::to_string(batch.outputs.size()) + " requests (" +
                              std::to_string(BatchTokenIdOutBytes(batch)) + " bytes) do not fit a " +
                              std::to_string(cap) + "-byte chunk");
  size_t ip = 0, op = 0, lp = 0, tp = 0, kp = 0;
  for (size_t i = 0; i < batch.outputs.size(); ++i) {
    const sched::TokenOutput& o = batch.outputs[i];
    OutputEntry& e = entries[i];
    std::memset(&e, 0, sizeof(e));
    e.rid = o.rid;
    e.finished = o.finished;
    e.finish_kind = static_cast<uint8_t>(o.finish.kind);
    e.matched_token = o.finish.matched_token;
    e.finish_length = o.finish.length;
    e.status_code = o.finish.status_code;
    e.prompt_tokens = o.prompt_tokens;
    e.completion_tokens = o.completion_tokens;
    e.cached_tokens = o.cached_tokens;
    e.skip_special_tokens = o.skip_special_tokens;
    e.ids_offset = static_cast<uint32_t>(ip);
    std::copy(o.prompt_tail.begin(), o.prompt_tail.end(), ids.data() + ip);
    ip += o.prompt_tail.size();
    e.read_offset = static_cast<int32_t>(o.prompt_tail.size());
    std::copy(o.output_ids.begin(), o.output_ids.end(), ids.data() + ip);
    ip += o.output_ids.size();
    e.ids_count = static_cast<uint32_t>(ip - e.ids_offset);
    e.out_ids_offset = static_cast<uint32_t>(op);
    std::copy(o.output_ids.begin(), o.output_ids.end(), out_ids.data() + op);
    op += o.output_ids.size();
    e.out_ids_count = static_cast<uint32_t>(o.output_ids.size());
    e.logprob_offset = static_cast<uint32_t>(lp);
    std::copy(o.output_logprobs.begin(), o.output_logprobs.end(), lps.data() + lp);
    lp += o.output_logprobs.size();
    e.logprob_count = static_cast<uint32_t>(o.output_logprobs.size());
    e.top_n = o.top_n;
    e.top_offset = static_cast<uint32_t>(kp);
    std::copy(o.top_ids.begin(), o.top_ids.end(), top_ids.data() + kp);
    std::copy(o.top_logprobs.begin(), o.top_logprobs.end(), top_lps.data() + kp);
    kp += o.top_ids.size();
    e.top_count = static_cast<uint32_t>(o.top_ids.size());
    const std::string& ft = o.finish.kind == FinishKind::kMatchedStr ? o.finish.matched_str : o.finish.message;
    e.finish_text_offset = static_cast<uint32_t>(tp);
    std::copy(ft.begin(), ft.end(), text.data() + tp);
    tp += ft.size();
    e.finish_text_len = static_cast<uint32_t>(ft.size());
  }
  return Status::Ok();
}

}  // namespace radixserve::nodes
