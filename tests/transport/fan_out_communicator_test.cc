// FanOutCommunicator: waits for fan_out replies, serves callers in FIFO order one at a time,
// times out cleanly, and drops replies to calls nobody waits for.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/fan_out_communicator.h"

namespace radixserve::transport {
namespace {

using namespace std::chrono_literals;

// A fake pair of scheduler ranks: each request sent is answered by `ranks` replies from another thread.
class FakeRanks {
 public:
  explicit FakeRanks(int ranks) : ranks_(ranks) {}
  ~FakeRanks() {
    for (auto& t : threads_) t.join();
  }
  FanOutCommunicator::SendFn Sender(FanOutCommunicator** comm) {
    return [this, comm](const control::ControlRequest& req) {
      {
        std::lock_guard<std::mutex> l(mu_);
        sent_.push_back(req.call_id());
        ++in_flight_;
        max_in_flight_ = std::max(max_in_flight_, in_flight_);
      }
      threads_.emplace_back([this, comm, req] {
        for (int r = 0; r < ranks_; ++r) {
          std::this_thread::sleep_for(2ms);
          control::ControlReply reply;
          reply.set_call_id(req.call_id());
          reply.set_success(!drop_success_);
          reply.set_message("rank" + std::to_string(r));
          if (r == ranks_ - 1) {
            std::lock_guard<std::mutex> l(mu_);
            --in_flight_;
          }
          (*comm)->HandleReply(reply);
        }
      });
      return Status::Ok();
    };
  }
  int max_in_flight() {
    std::lock_guard<std::mutex> l(mu_);
    return max_in_flight_;
  }
  bool drop_success_ = false;

 private:
  int ranks_;
  std::mutex mu_;
  std::vector<uint64_t> sent_;
  int in_flight_ = 0, max_in_flight_ = 0;
  std::vector<std::thread> threads_;
};

TEST(FanOutCommunicator, GathersOneReplyPerRank) {
  FanOutCommunicator* comm = nullptr;
  FakeRanks ranks(3);
  FanOutCommunicator c(ranks.Sender(&comm), 3);
  comm = &c;
  control::ControlRequest req;
  req.mutable_flush_cache();
  auto r = c.Call(req, 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  auto merged = FanOutCommunicator::Merge(*r);
  EXPECT_TRUE(merged.success());
  EXPECT_EQ(merged.message(), "rank0 | rank1 | rank2");
}

TEST(FanOutCommunicator, OneCallInFlightAndEveryCallerAnswered) {
  FanOutCommunicator* comm = nullptr;
  FakeRanks ranks(2);
  FanOutCommunicator c(ranks.Sender(&comm), 2);
  comm = &c;
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i)
    callers.emplace_back([&] {
      control::ControlRequest req;
      req.mutable_get_stats();
      auto r = c.Call(req, 10s);
      if (r.ok() && r->size() == 2 && (*r)[0].call_id() == (*r)[1].call_id()) ++ok;
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(ranks.max_in_flight(), 1);
}

TEST(FanOutCommunicator, TimesOutWhenRanksAreMissingAndRecovers) {
  std::mutex mu;
  std::vector<uint64_t> sent;
  auto sent_count = [&] { std::lock_guard<std::mutex> l(mu); return sent.size(); };
  auto last_sent = [&] { std::lock_guard<std::mutex> l(mu); return sent.back(); };
  FanOutCommunicator c(
      [&](const control::ControlRequest& r) {
        std::lock_guard<std::mutex> l(mu);
        sent.push_back(r.call_id());
        return Status::Ok();
      },
      2);
  control::ControlRequest req;
  req.mutable_flush_cache();
  auto r = c.Call(req, 30ms);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("0 of 2 replies"), std::string::npos);
  // A late reply to the abandoned call is dropped; the next call works.
  control::ControlReply late;
  late.set_call_id(last_sent());
  c.HandleReply(late);
  std::thread answer([&] {
    while (sent_count() < 2) std::this_thread::sleep_for(1ms);
    for (int i = 0; i < 2; ++i) {
      control::ControlReply rep;
      rep.set_call_id(last_sent());
      rep.set_success(true);
      c.HandleReply(rep);
    }
  });
  auto r2 = c.Call(req, 5s);
  answer.join();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->size(), 2u);
  EXPECT_NE(sent[0], sent[1]);
}

TEST(FanOutCommunicator, SendFailureIsReported) {
  FanOutCommunicator c([](const control::ControlRequest&) { return Status::ResourceExhausted("no chunks"); }, 1);
  auto r = c.Call(control::ControlRequest(), 1s);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

TEST(FanOutCommunicator, MergeReportsAnyFailure) {
  control::ControlReply a, b;
  a.set_success(true);
  b.set_success(false);
  b.set_message("busy");
  auto m = FanOutCommunicator::Merge({a, b});
  EXPECT_FALSE(m.success());
  EXPECT_EQ(m.message(), "busy");
  EXPECT_FALSE(FanOutCommunicator::Merge({}).success());
}

}  // namespace
}  // namespace radixserve::transport
