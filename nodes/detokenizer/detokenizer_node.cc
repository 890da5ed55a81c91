#include "nodes/detokenizer/detokenizer_node.h"

#include <glog/logging.h>

#include <algorithm>

#include "nodes/component.h"
#include "transport/messages.h"

namespace radixserve::nodes {

using transport::BatchStrOutMsg;
using transport::BatchTokenIdOutMsg;
using transport::OutputEntry;

DetokenizerNode::DetokenizerNode(NodeContext ctx) : Node(std::move(ctx)) {
  params().DeclareString("model", "", "GGUF file whose tokenizer decodes the output", {}, /*read_only=*/true);
  params().DeclareInt("max_states", 65536, 1, 1 << 24, "requests whose decode state is kept (LRU)", true);
  params().DeclareInt("max_payload", 4 << 20, 4096, 1 << 30, "largest shared-memory chunk in bytes", true);
}

DetokenizerNode::~DetokenizerNode() { Shutdown(); }

Status DetokenizerNode::OnConfigure() {
  std::string path = params().GetString("model");
  if (path.empty()) return Status::InvalidArgument("parameter 'model' is required");
  RS_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::Open(path));
  RS_ASSIGN_OR_RETURN(tokenizer_, Tokenizer::FromGguf(*file));
  detok_ = std::make_unique<detok::IncrementalDetokenizer>(tokenizer_.get(),
                                                           static_cast<size_t>(params().GetInt("max_states")));
  transport::ChannelOptions opts;
  opts.max_payload = static_cast<uint32_t>(params().GetInt("max_payload"));
  RS_ASSIGN_OR_RETURN(in_, transport::Subscriber::Create(ResolveTopic(transport::topics::kTokenIdOut), opts));
  RS_ASSIGN_OR_RETURN(out_, transport::Publisher::Create(ResolveTopic(transport::topics::kStrOut), opts));
  RS_ASSIGN_OR_RETURN(waiter_, transport::Waiter::Create());
  return waiter_->Attach(*in_);
}

Status DetokenizerNode::OnActivate() {
  loop_.Start(waiter_.get(), [this] { Loop(); });
  return Status::Ok();
}

Status DetokenizerNode::OnDeactivate() {
  loop_.Stop();
  return Status::Ok();
}

Status DetokenizerNode::OnCleanup() {
  waiter_.reset();
  in_.reset();
  out_.reset();
  detok_.reset();
  tokenizer_.reset();
  return Status::Ok();
}

void DetokenizerNode::Loop() {
  while (loop_.running()) {
    waiter_->Wait(std::chrono::milliseconds(200));
    while (transport::Received r = in_->TryTake()) HandleBatch(r.data(), r.size());
  }
}

void DetokenizerNode::HandleBatch(const void* data, size_t size) {
  auto v = transport::ValidateBatchTokenIdOut(data, size);
  if (!v.ok()) {
    ++dropped_messages_;
    LOG(ERROR) << name() << ": dropped a malformed message on " << in_->topic().ToString() << ": "
               << v.status().ToString();
    return;
  }
  const BatchTokenIdOutMsg* m = *v;
  auto entries = transport::ArrayOf<OutputEntry>(m, m->entries);
  auto ids = transport::ArrayOf<int32_t>(m, m->ids);
  auto text = transport::ArrayOf<char>(m, m->text);
  deltas_.resize(entries.size());
  size_t text_bytes = 0, out_id_count = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const OutputEntry& e = entries[i];
    detok::DetokInput in;
    in.rid = e.rid;
    in.new_ids = ids.subspan(e.ids_offset, e.ids_count);
    in.read_offset = e.read_offset;
    in.finished = e.finished != 0;
    in.skip_special_tokens = e.skip_special_tokens != 0;
    in.no_stop_trim = e.no_stop_trim != 0;
    in.matched_stop_token = e.finish_kind == uint8_t(FinishKind::kMatchedToken);
    if (e.finish_kind == uint8_t(FinishKind::kMatchedStr)) in.matched_stop_str = std::string_view(text.data() + e.finish_text_offset, e.finish_text_len);
    deltas_[i] = detok_->Step(in);
    text_bytes += deltas_[i].size() + e.finish_text_len;
    out_id_count += e.out_ids_count;
  }
  auto out_ids = transport::ArrayOf<int32_t>(m, m->out_ids);
  auto logprobs = transport::ArrayOf<float>(m, m->logprobs);
  auto top_ids = transport::ArrayOf<int32_t>(m, m->top_ids);
  auto top_lps = transport::ArrayOf<float>(m, m->top_logprobs);
  size_t bytes = BatchStrOutMsg::Bytes({.entries = entries.size(),
                                        .ids = out_id_count,
                                        .logprobs = logprobs.size(),
                                        .text_bytes = text_bytes,
                                        .top = top_ids.size()});
  auto chunk = out_->Loan(bytes);
  if (!chunk.ok()) {
    LOG(ERROR) << name() << ": cannot send " << entries.size() << " outputs: " << chunk.status().ToString();
    return;
  }
  transport::MessageWriter<BatchStrOutMsg> w(*chunk, bytes);
  auto* om = w.msg();
  auto out_entries = w.Append<OutputEntry>(om->entries, entries.size());
  auto out_ids_dst = w.Append<int32_t>(om->ids, out_id_count);
  auto lp_dst = w.Append<float>(om->logprobs, logprobs.size());
  auto text_dst = w.Append<char>(om->text, text_bytes);
  w.Copy<int32_t>(om->top_ids, top_ids);  // copied whole: the entries' top offsets stay valid
  w.Copy<float>(om->top_logprobs, top_lps);
  size_t id_pos = 0, text_pos = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    OutputEntry e = entries[i];
    std::copy_n(out_ids.data() + e.out_ids_offset, e.out_ids_count, out_ids_dst.data() + id_pos);
    e.ids_offset = static_cast<uint32_t>(id_pos);
    e.ids_count = e.out_ids_count;
    id_pos += e.out_ids_count;
    e.out_ids_offset = 0;
    e.out_ids_count = 0;
    std::copy(deltas_[i].begin(), deltas_[i].end(), text_dst.data() + text_pos);
    e.text_offset = static_cast<uint32_t>(text_pos);
    e.text_len = static_cast<uint32_t>(deltas_[i].size());
    text_pos += deltas_[i].size();
    std::copy_n(text.data() + e.finish_text_offset, e.finish_text_len, text_dst.data() + text_pos);
    e.finish_text_offset = static_cast<uint32_t>(text_pos);
    text_pos += e.finish_text_len;
    out_entries[i] = e;  // logprob offsets index the same logprobs array, copied whole below
  }
  if (!logprobs.empty()) std::copy(logprobs.begin(), logprobs.end(), lp_dst.begin());
  out_->Publish(*chunk);
}

RADIXSERVE_DEFINE_NODE_COMPONENT("detokenizer", "token ids to incremental text (SCHEDULER_SPEC 7.5)", DetokenizerNode)

}  // namespace radixserve::nodes
