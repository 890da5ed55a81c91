// Fuzz target: arbitrary bytes as a received chunk on each hot-path topic → Validate*.
// Input: byte 0 picks the message kind, byte 1 flags; the rest is the chunk, copied into an
// 8-aligned buffer as iceoryx chunks are. With flag 1 the header's magic, kind, version,
// fixed size and (when impossible) total size are made right, so that mutations reach the array checks instead of dying at
// the header. After a message validates, every array and every per-entry range is read in
// full (ASan sees any read outside the chunk).
// Properties: no crash; a validated message's arrays lie inside the chunk.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "transport/messages.h"

namespace t = radixserve::transport;

namespace {

volatile uint64_t g_sink;

template <typename E, typename M>
void Touch(const M* m, const t::ArrayRef& ref, size_t size) {
  auto span = t::ArrayOf<E>(m, ref);
  if (span.empty()) return;
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(span.data());
  FUZZ_CHECK(begin >= reinterpret_cast<const uint8_t*>(m));
  FUZZ_CHECK(begin + span.size_bytes() <= reinterpret_cast<const uint8_t*>(m) + size);
  uint64_t x = 0;
  for (const E& e : span) {
    uint8_t b[sizeof(E)];
    std::memcpy(b, &e, sizeof(E));
    x += b[0];
  }
  g_sink = g_sink + x;
}

template <typename M>
void TouchEntries(const M* m, size_t size) {
  Touch<t::OutputEntry>(m, m->entries, size);
  auto ids = t::ArrayOf<int32_t>(m, m->ids);
  auto out_ids = t::ArrayOf<int32_t>(m, m->out_ids);
  auto logprobs = t::ArrayOf<float>(m, m->logprobs);
  auto text = t::ArrayOf<char>(m, m->text);
  for (const t::OutputEntry& e : t::ArrayOf<t::OutputEntry>(m, m->entries)) {
    uint64_t x = 0;
    for (int32_t id : ids.subspan(e.ids_offset, e.ids_count)) x += static_cast<uint32_t>(id);
    if (std::is_same_v<M, t::BatchTokenIdOutMsg>)
      for (int32_t id : out_ids.subspan(e.out_ids_offset, e.out_ids_count)) x += static_cast<uint32_t>(id);
    for (float lp : logprobs.subspan(e.logprob_offset, e.logprob_count)) x += lp > 0;
    for (char c : text.subspan(e.text_offset, e.text_len)) x += static_cast<uint8_t>(c);
    for (char c : text.subspan(e.finish_text_offset, e.finish_text_len)) x += static_cast<uint8_t>(c);
    g_sink = g_sink + x;
  }
}

template <typename M>
void FixHeader(uint8_t* buf, size_t size) {
  if (size < sizeof(t::MessageHeader)) return;
  t::MessageHeader h;
  std::memcpy(&h, buf, sizeof(h));
  h.magic = t::kMessageMagic;
  h.kind = static_cast<uint16_t>(M::kKind);
  h.layout_version = M::kLayoutVersion;
  h.fixed_size = sizeof(M);
  if (h.total_size > size || h.total_size < sizeof(M)) h.total_size = static_cast<uint32_t>(size);
  std::memcpy(buf, &h, sizeof(h));
}

void Run(int kind, const uint8_t* buf, size_t size) {
  switch (kind) {
    case 0:
      if (auto m = t::ValidateTokenizedRequest(buf, size); m.ok()) {
        const auto* msg = *m;
        Touch<int32_t>(msg, msg->input_ids, size);
        Touch<int32_t>(msg, msg->stop_token_ids, size);
        Touch<char>(msg, msg->stop_str_bytes, size);
        Touch<uint32_t>(msg, msg->stop_str_lens, size);
        // The stop strings cut back to back from their lengths must stay inside the bytes.
        size_t used = 0;
        for (uint32_t len : t::ArrayOf<uint32_t>(msg, msg->stop_str_lens)) used += len;
        FUZZ_CHECK(used <= msg->stop_str_bytes.count);
      }
      break;
    case 1:
      (void)t::ValidateAbortRequest(buf, size);
      break;
    case 2:
      if (auto m = t::ValidateForwardBatch(buf, size); m.ok()) {
        const auto* msg = *m;
        Touch<t::ForwardReqWire>(msg, msg->reqs, size);
        Touch<int32_t>(msg, msg->input_ids, size);
        Touch<int32_t>(msg, msg->out_cache_loc, size);
        Touch<int32_t>(msg, msg->prefix_slots, size);
        Touch<uint64_t>(msg, msg->released_rids, size);
        Touch<int32_t>(msg, msg->history_ids, size);
        auto input_ids = t::ArrayOf<int32_t>(msg, msg->input_ids);
        auto prefix = t::ArrayOf<int32_t>(msg, msg->prefix_slots);
        auto history = t::ArrayOf<int32_t>(msg, msg->history_ids);
        uint64_t x = 0;
        for (const auto& r : t::ArrayOf<t::ForwardReqWire>(msg, msg->reqs)) {
          for (int32_t id : input_ids.subspan(r.token_offset, r.extend_len)) x += static_cast<uint32_t>(id);
          for (int32_t s : prefix.subspan(r.prefix_offset, r.prefix_len - r.sync_begin)) x += static_cast<uint32_t>(s);
          for (int32_t h : history.subspan(r.history_offset, r.history_len)) x += static_cast<uint32_t>(h);
        }
        g_sink = g_sink + x;
      }
      break;
    case 3:
      if (auto m = t::ValidateForwardResult(buf, size); m.ok()) {
        const auto* msg = *m;
        Touch<int32_t>(msg, msg->next_token_ids, size);
        Touch<float>(msg, msg->logprobs, size);
        Touch<int32_t>(msg, msg->top_ids, size);
        Touch<float>(msg, msg->top_logprobs, size);
        Touch<char>(msg, msg->error, size);
      }
      break;
    case 4:
      if (auto m = t::ValidateBatchTokenIdOut(buf, size); m.ok()) TouchEntries(*m, size);
      break;
    case 5:
      if (auto m = t::ValidateBatchStrOut(buf, size); m.ok()) TouchEntries(*m, size);
      break;
    case 6:
      if (auto m = t::ValidateNodeStatus(buf, size); m.ok()) g_sink = g_sink + (*m)->state;
      break;
    case 7:
      if (auto m = t::ValidateControl(buf, size); m.ok()) Touch<uint8_t>(*m, (*m)->payload, size);
      break;
    case 8:
      if (auto m = t::ValidateCacheEvents(buf, size); m.ok()) {
        Touch<t::CacheEventWire>(*m, (*m)->events, size);
        auto tokens = t::ArrayOf<int32_t>(*m, (*m)->tokens);
        auto ns = t::ArrayOf<char>(*m, (*m)->ns_bytes);
        for (const t::CacheEventWire& e : t::ArrayOf<t::CacheEventWire>(*m, (*m)->events)) {
          uint64_t x = 0;
          for (int32_t id : tokens.subspan(e.tokens_offset, e.tokens_count)) x += static_cast<uint32_t>(id);
          for (char c : ns.subspan(e.ns_offset, e.ns_len)) x += static_cast<uint8_t>(c);
          g_sink = g_sink + x;
        }
      }
      break;
    case 9:
      if (auto m = t::ValidateActivations(buf, size); m.ok()) {
        Touch<float>(*m, (*m)->hidden, size);
        Touch<char>(*m, (*m)->error, size);
      }
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int kind = data[0] % 10;
  const bool fix = data[1] & 1;
  size -= 2;
  // An exact-size heap buffer (8-aligned by new), so that ASan flags any read past the chunk.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(buf.get(), data + 2, size);
  if (fix) {
    switch (kind) {
      case 0: FixHeader<t::TokenizedRequestMsg>(buf.get(), size); break;
      case 1: FixHeader<t::AbortRequestMsg>(buf.get(), size); break;
      case 2: FixHeader<t::ForwardBatchMsg>(buf.get(), size); break;
      case 3: FixHeader<t::ForwardResultMsg>(buf.get(), size); break;
      case 4: FixHeader<t::BatchTokenIdOutMsg>(buf.get(), size); break;
      case 5: FixHeader<t::BatchStrOutMsg>(buf.get(), size); break;
      case 6: FixHeader<t::NodeStatusMsg>(buf.get(), size); break;
      case 7: FixHeader<t::ControlMsg>(buf.get(), size); break;
      case 8: FixHeader<t::CacheEventsMsg>(buf.get(), size); break;
      case 9: FixHeader<t::ActivationsMsg>(buf.get(), size); break;
    }
  }
  Run(kind, buf.get(), size);
  return 0;
}
