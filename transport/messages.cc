#include "transport/messages.h"

namespace radixserve::transport {
namespace {

template <typename M>
Result<const M*> Header(const void* bytes, size_t size) noexcept {
  RS_RETURN_IF_ERROR(ValidateHeader<M>(bytes, size));
  return static_cast<const M*>(bytes);
}

// Checks the per-entry ranges of an output message against its arrays.
Status ValidateEntries(const void* msg, std::span<const OutputEntry> entries, const ArrayRef& ids,
                       const ArrayRef& out_ids, const ArrayRef& logprobs, const ArrayRef& text,
                       const ArrayRef& top) noexcept {
  auto in = [](uint32_t off, uint32_t count, const ArrayRef& arr) {
    return uint64_t(off) + count <= arr.count;
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    const OutputEntry& e = entries[i];
    if (!in(e.ids_offset, e.ids_count, ids) || !in(e.out_ids_offset, e.out_ids_count, out_ids) ||
        !in(e.logprob_offset, e.logprob_count, logprobs) || !in(e.text_offset, e.text_len, text) ||
        !in(e.finish_text_offset, e.finish_text_len, text) || !in(e.top_offset, e.top_count, top) ||
        e.top_n < 0 || e.top_n > int32_t(kMaxTopLogprobs))
      return Status::Corrupt("output entry " + std::to_string(i) + " (rid " + std::to_string(e.rid) +
                             ") points outside its arrays");
  }
  return Status::Ok();
}

}  // namespace

MessageKind PeekKind(const void* bytes, size_t size) noexcept {
  if (size < sizeof(MessageHeader)) return MessageKind::kInvalid;
  MessageHeader h;
  std::memcpy(&h, bytes, sizeof(h));
  if (h.magic != kMessageMagic) return MessageKind::kInvalid;
  return static_cast<MessageKind>(h.kind);
}

Result<const TokenizedRequestMsg*> ValidateTokenizedRequest(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const TokenizedRequestMsg* m, Header<TokenizedRequestMsg>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->input_ids, kMaxTokensPerMessage, "input_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->stop_token_ids, kMaxTokensPerMessage, "stop_token_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->stop_str_bytes, kMaxTextBytes, "stop_str_bytes"));
  RS_RETURN_IF_ERROR(ValidateArray<uint32_t>(m, m->stop_str_lens, kMaxStopStrings, "stop_str_lens"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->cache_salt, kMaxKeyBytes, "cache_salt"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->routing_key, kMaxKeyBytes, "routing_key"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->grammar_text, kMaxGrammarBytes, "grammar_text"));
  if (m->grammar_kind > kMaxGrammarKind) return Status::Corrupt("grammar kind out of range");
  uint64_t total = 0;
  for (uint32_t len : ArrayOf<uint32_t>(m, m->stop_str_lens)) total += len;
  if (total != m->stop_str_bytes.count) return Status::Corrupt("stop string lengths do not add up to their bytes");
  if (m->top_logprobs_num < 0 || m->top_logprobs_num > int32_t(kMaxTopLogprobs))
    return Status::Corrupt("top_logprobs_num out of range");
  return m;
}

Result<const AbortRequestMsg*> ValidateAbortRequest(const void* bytes, size_t size) noexcept {
  return Header<AbortRequestMsg>(bytes, size);
}

Result<const ForwardBatchMsg*> ValidateForwardBatch(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const ForwardBatchMsg* m, Header<ForwardBatchMsg>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<ForwardReqWire>(m, m->reqs, kMaxRequestsPerBatch, "reqs"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->input_ids, kMaxTokensPerMessage, "input_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->out_cache_loc, kMaxTokensPerMessage, "out_cache_loc"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->prefix_slots, kMaxTokensPerMessage, "prefix_slots"));
  RS_RETURN_IF_ERROR(ValidateArray<uint64_t>(m, m->released_rids, kMaxRequestsPerBatch, "released_rids"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->history_ids, kMaxTokensPerMessage, "history_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->grammar_text, kMaxTextBytes, "grammar_text"));
  if (m->input_ids.count != m->out_cache_loc.count)
    return Status::Corrupt("input_ids and out_cache_loc differ in length");
  for (const ForwardReqWire& r : ArrayOf<ForwardReqWire>(m, m->reqs)) {
    if (r.extend_len < 0 || r.token_offset < 0 || r.prefix_len < 0 || r.sync_begin < 0 || r.prefix_offset < 0 ||
        r.sync_begin > r.prefix_len || uint64_t(r.token_offset) + uint64_t(r.extend_len) > m->input_ids.count ||
        uint64_t(r.prefix_offset) + uint64_t(r.prefix_len - r.sync_begin) > m->prefix_slots.count ||
        uint64_t(r.history_offset) + r.history_len > m->history_ids.count ||
        uint64_t(r.grammar_offset) + r.grammar_len > m->grammar_text.count || r.grammar_kind > kMaxGrammarKind ||
        r.output_begin < -1)
      return Status::Corrupt("forward request rid " + std::to_string(r.rid) + " has inconsistent ranges");
  }
  return m;
}

Result<const ForwardResultMsg*> ValidateForwardResult(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const ForwardResultMsg* m, Header<ForwardResultMsg>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->next_token_ids, kMaxRequestsPerBatch, "next_token_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<float>(m, m->logprobs, kMaxRequestsPerBatch, "logprobs"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->top_ids, kMaxRequestsPerBatch * kMaxTopLogprobs, "top_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<float>(m, m->top_logprobs, kMaxRequestsPerBatch * kMaxTopLogprobs, "top_logprobs"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->error, 4096, "error"));
  if (m->top_n < 0 || m->top_n > int32_t(kMaxTopLogprobs)) return Status::Corrupt("top_n out of range");
  if (m->top_ids.count != m->top_logprobs.count ||
      (m->top_n > 0 && m->top_ids.count != uint64_t(m->top_n) * m->next_token_ids.count))
    return Status::Corrupt("top logprob arrays do not match top_n");
  return m;
}

// BatchTokenIdOut and BatchStrOut share one layout of entries and arrays.
template <typename M>
Result<const M*> ValidateOutputBatch(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const M* m, Header<M>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<OutputEntry>(m, m->entries, kMaxRequestsPerBatch, "entries"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->ids, kMaxTokensPerMessage, "ids"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->out_ids, kMaxTokensPerMessage, "out_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<float>(m, m->logprobs, kMaxTokensPerMessage, "logprobs"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->text, kMaxTextBytes, "text"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->top_ids, kMaxTokensPerMessage, "top_ids"));
  RS_RETURN_IF_ERROR(ValidateArray<float>(m, m->top_logprobs, kMaxTokensPerMessage, "top_logprobs"));
  if (m->top_ids.count != m->top_logprobs.count) return Status::Corrupt("top_ids and top_logprobs differ in length");
  RS_RETURN_IF_ERROR(
      ValidateEntries(m, ArrayOf<OutputEntry>(m, m->entries), m->ids, m->out_ids, m->logprobs, m->text, m->top_ids));
  return m;
}

Result<const BatchTokenIdOutMsg*> ValidateBatchTokenIdOut(const void* bytes, size_t size) noexcept {
  return ValidateOutputBatch<BatchTokenIdOutMsg>(bytes, size);
}

Result<const BatchStrOutMsg*> ValidateBatchStrOut(const void* bytes, size_t size) noexcept {
  return ValidateOutputBatch<BatchStrOutMsg>(bytes, size);
}

Result<const NodeStatusMsg*> ValidateNodeStatus(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const NodeStatusMsg* m, Header<NodeStatusMsg>(bytes, size));
  if (std::memchr(m->name, 0, sizeof(m->name)) == nullptr || std::memchr(m->component, 0, sizeof(m->component)) == nullptr)
    return Status::Corrupt("node status names are not NUL-terminated");
  return m;
}

Result<const ControlMsg*> ValidateControl(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const ControlMsg* m, Header<ControlMsg>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<uint8_t>(m, m->payload, kMaxTextBytes, "payload"));
  return m;
}

Result<const CacheEventsMsg*> ValidateCacheEvents(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const CacheEventsMsg* m, Header<CacheEventsMsg>(bytes, size));
  RS_RETURN_IF_ERROR(ValidateArray<CacheEventWire>(m, m->events, kMaxRequestsPerBatch * 4, "events"));
  RS_RETURN_IF_ERROR(ValidateArray<int32_t>(m, m->tokens, kMaxTokensPerMessage, "tokens"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->ns_bytes, kMaxTextBytes, "ns_bytes"));
  auto events = ArrayOf<CacheEventWire>(m, m->events);
  for (size_t i = 0; i < events.size(); ++i) {
    const CacheEventWire& e = events[i];
    if (e.kind > kMaxCacheEventKind || uint64_t(e.tokens_offset) + e.tokens_count > m->tokens.count ||
        uint64_t(e.ns_offset) + e.ns_len > m->ns_bytes.count || e.ns_len > kMaxKeyBytes || e.changed < 0 ||
        uint32_t(e.changed) > e.tokens_count)
      return Status::Corrupt("cache event " + std::to_string(i) + " is inconsistent with its arrays");
  }
  return m;
}

Result<const ActivationsMsg*> ValidateActivations(const void* bytes, size_t size) noexcept {
  RS_ASSIGN_OR_RETURN(const ActivationsMsg* m, Header<ActivationsMsg>(bytes, size));
  if (m->dim == 0 || m->dim > ActivationsMsg::kMaxDim) return Status::Corrupt("activations: dim out of range");
  RS_RETURN_IF_ERROR(ValidateArray<float>(m, m->hidden, UINT32_MAX, "hidden"));
  RS_RETURN_IF_ERROR(ValidateArray<char>(m, m->error, ActivationsMsg::kMaxErrorBytes, "error"));
  if (m->hidden.count % m->dim != 0) return Status::Corrupt("activations: hidden is not a whole number of tokens");
  return m;
}

}  // namespace radixserve::transport
