// The node layer's codecs: every field of a forward batch, a forward result,
// a tokenized request, an output batch and a batch of cache events survives its message; the sizes the
// writers loan are exactly what they write (Bytes() is the one definition);
// and a chunk that is too small is an error, never an overrun.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "nodes/cache_event_codec.h"
#include "nodes/forward_codec.h"
#include "nodes/output_codec.h"
#include "nodes/request_codec.h"
#include "transport/messages.h"

namespace radixserve::nodes {
namespace {

using V = std::vector<int32_t>;

// A buffer with guard bytes after `size`, to catch writes past the loaned size.
struct Chunk {
  explicit Chunk(size_t size) : bytes(size + 64, 0xAB), size(size) {}
  void* data() { return bytes.data(); }
  bool guard_intact() const {
    for (size_t i = size; i < bytes.size(); ++i)
      if (bytes[i] != 0xAB) return false;
    return true;
  }
  alignas(8) std::vector<uint8_t> bytes;
  size_t size;
};

sched::ForwardBatch SampleBatch() {
  sched::ForwardBatch b;
  b.batch_id = 42;
  b.mode = sched::ForwardMode::kMixed;
  sched::ForwardReq a;
  a.rid = 7;
  a.row = 3;
  a.sync_begin = 1;
  a.prefix_offset = 0;
  a.prefix_len = 4;
  a.extend_len = 2;
  a.token_offset = 0;
  a.new_state = true;
  a.history_offset = 0;
  a.history_len = 4;
  a.sampling.temperature = 0.5f;
  a.sampling.repetition_penalty = 1.2f;
  a.return_logprob = true;
  a.top_logprobs_num = 3;
  sched::ForwardReq d;
  d.rid = 9;
  d.row = 0;
  d.prefix_len = 10;
  d.sync_begin = 10;  // its row is already in the mirror: no patch
  d.prefix_offset = 3;
  d.extend_len = 1;
  d.token_offset = 2;
  d.sample = true;
  b.reqs = {a, d};
  b.input_ids = {5, 6, sched::kFutureToken};
  b.out_cache_loc = {100, 101, 250};
  b.prefix_slots = {11, 12, 13};
  b.history_ids = {1, 2, 3, 4};
  b.released_rids = {1, 5, 8};
  return b;
}

TEST(ForwardCodec, BatchRoundTripsEveryField) {
  const sched::ForwardBatch b = SampleBatch();
  Chunk c(ForwardBatchBytes(b));
  ASSERT_TRUE(EncodeForwardBatch(b, c.data(), c.size).ok());
  EXPECT_TRUE(c.guard_intact());
  auto m = transport::ValidateForwardBatch(c.data(), c.size);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  sched::ForwardBatch out;
  out.input_ids = {99};  // storage is reused, contents replaced
  DecodeForwardBatch(*m, &out);
  EXPECT_EQ(out.batch_id, b.batch_id);
  EXPECT_EQ(out.mode, b.mode);
  EXPECT_EQ(out.input_ids, b.input_ids);
  EXPECT_EQ(out.out_cache_loc, b.out_cache_loc);
  EXPECT_EQ(out.prefix_slots, b.prefix_slots);
  EXPECT_EQ(out.history_ids, b.history_ids);
  EXPECT_EQ(out.released_rids, b.released_rids);
  ASSERT_EQ(out.reqs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const sched::ForwardReq &x = b.reqs[i], &y = out.reqs[i];
    EXPECT_EQ(y.rid, x.rid);
    EXPECT_EQ(y.row, x.row);
    EXPECT_EQ(y.sync_begin, x.sync_begin);
    EXPECT_EQ(y.prefix_offset, x.prefix_offset);
    EXPECT_EQ(y.prefix_len, x.prefix_len);
    EXPECT_EQ(y.extend_len, x.extend_len);
    EXPECT_EQ(y.token_offset, x.token_offset);
    EXPECT_EQ(y.sample, x.sample);
    EXPECT_EQ(y.new_state, x.new_state);
    EXPECT_EQ(y.history_offset, x.history_offset);
    EXPECT_EQ(y.history_len, x.history_len);
    EXPECT_EQ(y.return_logprob, x.return_logprob);
    EXPECT_EQ(y.top_logprobs_num, x.top_logprobs_num);
    EXPECT_EQ(y.sampling.temperature, x.sampling.temperature);
    EXPECT_EQ(y.sampling.repetition_penalty, x.sampling.repetition_penalty);
  }
}

TEST(ForwardCodec, ResultRoundTripsAndCarriesTheWorkersError) {
  sched::ForwardResult r;
  r.batch_id = 42;
  r.next_token_ids = {3, 4};
  r.logprobs = {-0.5f, -1.5f};
  r.top_n = 2;
  r.top_ids = {3, 8, 4, -1};
  r.top_logprobs = {-0.5f, -2.0f, -1.5f, 0.0f};
  r.request_states = 5;
  for (const Status& status : {Status::Ok(), Status::InvalidArgument("request 9: temperature must be >= 0")}) {
    Chunk c(ForwardResultBytes(r, status));
    ASSERT_TRUE(EncodeForwardResult(r, status, c.data(), c.size).ok());
    EXPECT_TRUE(c.guard_intact());
    auto m = transport::ValidateForwardResult(c.data(), c.size);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    sched::ForwardResult out;
    Status got = DecodeForwardResult(*m, &out);
    EXPECT_EQ(got.code(), status.code());
    if (!status.ok()) EXPECT_NE(got.message().find(status.message()), std::string::npos) << got.message();
    EXPECT_EQ(out.batch_id, r.batch_id);
    EXPECT_EQ(out.next_token_ids, r.next_token_ids);
    EXPECT_EQ(out.logprobs, r.logprobs);
    EXPECT_EQ(out.top_n, r.top_n);
    EXPECT_EQ(out.top_ids, r.top_ids);
    EXPECT_EQ(out.top_logprobs, r.top_logprobs);
    EXPECT_EQ(out.request_states, r.request_states);
  }
}

TEST(RequestCodec, TokenizedRequestRoundTripsEveryField) {
  sched::TokenizedRequest r;
  r.rid = 123;
  r.input_ids = {1, 15, 27, 99};
  r.spec.sampling.max_new_tokens = 17;
  r.spec.sampling.top_k = 5;
  r.spec.sampling.seed = 77;
  r.spec.sampling.has_seed = true;
  r.spec.stop_token_ids = {2, 13};
  r.spec.stop_strs = {"The end", "", "\n\n"};
  r.spec.stream = true;
  r.spec.return_logprob = true;
  r.spec.top_logprobs_num = 4;
  r.spec.priority = -3;
  r.spec.cache_salt = "tenant \0 with a NUL";
  r.spec.routing_key = "session-7";
  Chunk c(TokenizedRequestBytes(r));
  ASSERT_TRUE(EncodeTokenizedRequest(r, 12.5, c.data(), c.size).ok());
  EXPECT_TRUE(c.guard_intact());
  auto m = transport::ValidateTokenizedRequest(c.data(), c.size);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->arrival_time, 12.5);
  sched::TokenizedRequest out;
  out.spec.stop_strs = {"stale"};
  DecodeTokenizedRequest(*m, &out);
  EXPECT_EQ(out.rid, r.rid);
  EXPECT_EQ(out.input_ids, r.input_ids);
  EXPECT_EQ(out.spec.sampling.max_new_tokens, 17);
  EXPECT_EQ(out.spec.sampling.top_k, 5);
  EXPECT_EQ(out.spec.sampling.seed, 77u);
  EXPECT_TRUE(out.spec.sampling.has_seed);
  EXPECT_EQ(out.spec.stop_token_ids, r.spec.stop_token_ids);
  EXPECT_EQ(out.spec.stop_strs, r.spec.stop_strs);
  EXPECT_TRUE(out.spec.stream);
  EXPECT_TRUE(out.spec.return_logprob);
  EXPECT_EQ(out.spec.top_logprobs_num, 4);
  ASSERT_TRUE(out.spec.priority.has_value());
  EXPECT_EQ(*out.spec.priority, -3);
  EXPECT_EQ(out.spec.cache_salt, r.spec.cache_salt);
  EXPECT_EQ(out.spec.routing_key, "session-7");
}

TEST(OutputCodec, FirstMessageCarriesThePromptTailBeforeTheNewIds) {
  sched::BatchTokenIdOut batch;
  sched::TokenOutput first;
  first.rid = 1;
  first.prompt_tail = {50, 51, 52};
  first.output_ids = {60, 61};
  first.output_logprobs = {-0.1f, -0.2f};
  first.top_n = 1;
  first.top_ids = {60, 61};
  first.top_logprobs = {-0.1f, -0.2f};
  first.skip_special_tokens = false;
  first.prompt_tokens = 9;
  first.completion_tokens = 2;
  sched::TokenOutput done;
  done.rid = 2;
  done.output_ids = {70};
  done.finished = true;
  done.finish = FinishReason::Str("The end");
  done.completion_tokens = 5;
  sched::TokenOutput aborted;
  aborted.rid = 3;
  aborted.finished = true;
  aborted.finish = FinishReason::Abort("waiting queue is full", 503);
  batch.outputs = {first, done, aborted};

  Chunk c(BatchTokenIdOutBytes(batch));
  ASSERT_TRUE(EncodeBatchTokenIdOut(batch, c.data(), c.size).ok());
  EXPECT_TRUE(c.guard_intact());
  auto m = transport::ValidateBatchTokenIdOut(c.data(), c.size);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto entries = transport::ArrayOf<transport::OutputEntry>(*m, (*m)->entries);
  auto ids = transport::ArrayOf<int32_t>(*m, (*m)->ids);
  auto out_ids = transport::ArrayOf<int32_t>(*m, (*m)->out_ids);
  auto text = transport::ArrayOf<char>(*m, (*m)->text);
  auto top = transport::ArrayOf<int32_t>(*m, (*m)->top_ids);
  ASSERT_EQ(entries.size(), 3u);
  const auto& e0 = entries[0];
  EXPECT_EQ(V(ids.begin() + e0.ids_offset, ids.begin() + e0.ids_offset + e0.ids_count), V({50, 51, 52, 60, 61}));
  EXPECT_EQ(e0.read_offset, 3) << "decoding starts after the prompt tail";
  EXPECT_EQ(V(out_ids.begin() + e0.out_ids_offset, out_ids.begin() + e0.out_ids_offset + e0.out_ids_count),
            V({60, 61}));
  EXPECT_EQ(e0.skip_special_tokens, 0);
  EXPECT_EQ(e0.logprob_count, 2u);
  EXPECT_EQ(e0.top_n, 1);
  EXPECT_EQ(V(top.begin() + e0.top_offset, top.begin() + e0.top_offset + e0.top_count), V({60, 61}));
  EXPECT_EQ(e0.finished, 0);
  const auto& e1 = entries[1];
  EXPECT_EQ(e1.read_offset, 0);
  EXPECT_EQ(e1.finish_kind, uint8_t(FinishKind::kMatchedStr));
  EXPECT_EQ(std::string(text.data() + e1.finish_text_offset, e1.finish_text_len), "The end");
  const auto& e2 = entries[2];
  EXPECT_EQ(e2.finish_kind, uint8_t(FinishKind::kAbort));
  EXPECT_EQ(e2.status_code, 503);
  EXPECT_EQ(std::string(text.data() + e2.finish_text_offset, e2.finish_text_len), "waiting queue is full");
}

// A chunk smaller than the message is refused before anything is written past it.
TEST(Codecs, TooSmallAChunkIsAnErrorNotAnOverrun) {
  const sched::ForwardBatch b = SampleBatch();
  Chunk fb(ForwardBatchBytes(b) - 8);
  EXPECT_EQ(EncodeForwardBatch(b, fb.data(), fb.size).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(fb.guard_intact());
  sched::TokenizedRequest r;
  r.input_ids.assign(100, 7);
  r.spec.stop_strs = {"abc"};
  Chunk tr(TokenizedRequestBytes(r) - 8);
  EXPECT_EQ(EncodeTokenizedRequest(r, 0, tr.data(), tr.size).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(tr.guard_intact());
  sched::BatchTokenIdOut out;
  out.outputs.resize(2);
  out.outputs[0].output_ids = {1, 2, 3};
  out.outputs[1].prompt_tail = {4, 5};
  Chunk ob(BatchTokenIdOutBytes(out) - 8);
  EXPECT_EQ(EncodeBatchTokenIdOut(out, ob.data(), ob.size).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(ob.guard_intact());
}

TEST(CacheEventCodec, EventsRoundTripInOrderAndACorruptOneIsRefused) {
  CacheEventBatch batch;
  const V a = {1, 2, 3, 4}, b = {1, 2, 9};
  batch.Add({sched::CacheEvent::Kind::kStored, "", a, 4});
  batch.Add({sched::CacheEvent::Kind::kStored, "tenant", b, 1});
  batch.Add({sched::CacheEvent::Kind::kRemoved, "", a, 2});
  batch.Add({sched::CacheEvent::Kind::kCleared, "", {}, 0});
  Chunk c(batch.bytes());
  ASSERT_TRUE(batch.Encode(77, 5, c.data(), c.size).ok());
  EXPECT_TRUE(c.guard_intact());
  auto m = transport::ValidateCacheEvents(c.data(), c.size);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->epoch, 77u);
  EXPECT_EQ((*m)->seq, 5u);
  std::vector<std::tuple<sched::CacheEvent::Kind, std::string, V, int32_t>> got;
  ForEachCacheEvent(*m, [&](const sched::CacheEvent& e) {
    got.emplace_back(e.kind, std::string(e.ns), V(e.tokens.begin(), e.tokens.end()), e.changed);
  });
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], std::make_tuple(sched::CacheEvent::Kind::kStored, std::string(), a, 4));
  EXPECT_EQ(got[1], std::make_tuple(sched::CacheEvent::Kind::kStored, std::string("tenant"), b, 1));
  EXPECT_EQ(got[2], std::make_tuple(sched::CacheEvent::Kind::kRemoved, std::string(), a, 2));
  EXPECT_EQ(std::get<0>(got[3]), sched::CacheEvent::Kind::kCleared);
  // Too small a chunk is an error; an event pointing past its arrays is refused by the reader.
  Chunk small(batch.bytes() - 8);
  EXPECT_EQ(batch.Encode(1, 1, small.data(), small.size).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(small.guard_intact());
  auto* msg = static_cast<transport::CacheEventsMsg*>(c.data());
  auto* events = reinterpret_cast<transport::CacheEventWire*>(static_cast<uint8_t*>(c.data()) + msg->events.offset);
  events[1].changed = 7;  // more than its 3 tokens
  EXPECT_EQ(transport::ValidateCacheEvents(c.data(), c.size).status().code(), StatusCode::kCorrupt);
  events[1].changed = 1;
  events[0].tokens_count = 1000;
  EXPECT_EQ(transport::ValidateCacheEvents(c.data(), c.size).status().code(), StatusCode::kCorrupt);
}

TEST(ActivationsCodec, HiddenStateAndErrorsRoundTripAndABadShapeIsRefused) {
  const std::vector<float> hidden = {0.5f, -1.25f, 3.0f, 7.5f, -0.0f, 1e-7f};
  Chunk c(ActivationsBytes(hidden.size(), Status::Ok()));
  ASSERT_TRUE(EncodeActivations(42, 3, hidden, Status::Ok(), c.data(), c.size).ok());
  EXPECT_TRUE(c.guard_intact());
  auto m = transport::ValidateActivations(c.data(), c.size);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->batch_id, 42u);
  EXPECT_EQ((*m)->dim, 3u);
  auto got = transport::ArrayOf<float>(*m, (*m)->hidden);
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), hidden);
  EXPECT_TRUE(ActivationsStatus(*m).ok());

  const Status failed = Status::ResourceExhausted("stage 0 ran out of memory");
  Chunk e(ActivationsBytes(hidden.size(), failed));
  ASSERT_TRUE(EncodeActivations(43, 3, hidden, failed, e.data(), e.size).ok());
  auto em = transport::ValidateActivations(e.data(), e.size);
  ASSERT_TRUE(em.ok());
  EXPECT_EQ((*em)->hidden.count, 0u);  // a failed step sends its error, not its floats
  EXPECT_EQ(ActivationsStatus(*em).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ActivationsStatus(*em).message(), "stage 0 ran out of memory");

  Chunk small(ActivationsBytes(hidden.size(), Status::Ok()) - 8);
  EXPECT_EQ(EncodeActivations(1, 3, hidden, Status::Ok(), small.data(), small.size).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(small.guard_intact());
  static_cast<transport::ActivationsMsg*>(c.data())->dim = 4;  // 6 floats are not whole tokens of 4
  EXPECT_EQ(transport::ValidateActivations(c.data(), c.size).status().code(), StatusCode::kCorrupt);
  static_cast<transport::ActivationsMsg*>(c.data())->dim = 0;
  EXPECT_EQ(transport::ValidateActivations(c.data(), c.size).status().code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace radixserve::nodes
