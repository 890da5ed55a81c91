// The worker node's handling of batches, without RouDi: a forward-batch
// message runs on the worker and its outcome is the reply; a malformed
// message runs nothing; a failed step answers with the error and no tokens;
// the reply reports the request states left after the step's releases.
#include <gtest/gtest.h>

#include <vector>

#include "nodes/forward_codec.h"
#include "nodes/worker/batch_handler.h"
#include "tests/scheduler/fake_worker.h"

namespace radixserve::nodes {
namespace {

std::vector<uint8_t> Encode(const sched::ForwardBatch& b) {
  std::vector<uint8_t> buf(ForwardBatchBytes(b));
  EXPECT_TRUE(EncodeForwardBatch(b, buf.data(), buf.size()).ok());
  return buf;
}

// A new request's prefill: `n` prompt tokens at slots 1..n of row `row`.
sched::ForwardBatch Prefill(uint64_t batch_id, uint64_t rid, int32_t row, int32_t n, int32_t first_slot) {
  sched::ForwardBatch b;
  b.batch_id = batch_id;
  b.mode = sched::ForwardMode::kExtend;
  sched::ForwardReq f;
  f.rid = rid;
  f.row = row;
  f.extend_len = n;
  f.new_state = true;
  b.reqs.push_back(f);
  for (int32_t i = 0; i < n; ++i) {
    b.input_ids.push_back(10 + i);
    b.out_cache_loc.push_back(first_slot + i);
  }
  return b;
}

class BatchHandlerTest : public ::testing::Test {
 protected:
  sched::FakeWorker worker_{sched::FakeWorkerOptions{}};
  BatchHandler handler_{&worker_};
};

TEST_F(BatchHandlerTest, RunsTheBatchAndReportsTheStatesLeft) {
  auto msg = Encode(Prefill(1, 7, 0, 4, 1));
  auto out = handler_.Handle(msg.data(), msg.size());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->status.ok()) << out->status.ToString();
  EXPECT_EQ(out->result->batch_id, 1u);
  ASSERT_EQ(out->result->next_token_ids.size(), 1u);
  EXPECT_EQ(out->result->next_token_ids[0], worker_.Reference(std::vector<int32_t>{10, 11, 12, 13}));
  EXPECT_EQ(out->result->request_states, 1);

  // The next batch releases it (a batch without requests, as the scheduler sends before idling).
  sched::ForwardBatch release;
  release.batch_id = 2;
  release.released_rids = {7};
  msg = Encode(release);
  out = handler_.Handle(msg.data(), msg.size());
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->status.ok());
  EXPECT_TRUE(out->result->next_token_ids.empty());
  EXPECT_EQ(out->result->request_states, 0);
}

TEST_F(BatchHandlerTest, AMalformedMessageRunsNothing) {
  auto msg = Encode(Prefill(1, 7, 0, 4, 1));
  msg.resize(msg.size() - 16);  // truncated
  auto out = handler_.Handle(msg.data(), msg.size());
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCorrupt) << out.status().ToString();
  EXPECT_EQ(worker_.forwards(), 0);
}

// The worker refuses a step (here: a request sampled without its state record); the reply has the
// error and no tokens, so the scheduler ends that batch's requests with it.
TEST_F(BatchHandlerTest, AFailedStepAnswersWithItsErrorAndNoTokens) {
  sched::ForwardBatch b = Prefill(5, 9, 1, 3, 20);
  b.reqs[0].new_state = false;
  auto msg = Encode(b);
  auto out = handler_.Handle(msg.data(), msg.size());
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->status.ok());
  EXPECT_NE(out->status.message().find("sampled without a state"), std::string::npos) << out->status.ToString();
  EXPECT_EQ(out->result->batch_id, 5u);
  EXPECT_TRUE(out->result->next_token_ids.empty());
  std::vector<uint8_t> reply(ForwardResultBytes(*out->result, out->status));
  ASSERT_TRUE(EncodeForwardResult(*out->result, out->status, reply.data(), reply.size()).ok());
  auto m = transport::ValidateForwardResult(reply.data(), reply.size());
  ASSERT_TRUE(m.ok());
  sched::ForwardResult decoded;
  EXPECT_EQ(DecodeForwardResult(*m, &decoded).code(), out->status.code());
}

}  // namespace
}  // namespace radixserve::nodes
