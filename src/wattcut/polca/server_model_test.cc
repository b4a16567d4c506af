#include "wattcut/polca/server_model.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace wattcut::polca {
namespace {

class ServerModelTest : public ::testing::Test {
 protected:
  ServerModelTest() : config_(*BuiltInConfig("a100")), model_(config_), settings_(model_, config_) {}

  // Runs the server's events until it has none left or `until` passes.
  void Drain(InferenceServer& s, ServedLog& log, double until = 1e9) {
    while (s.next_event_s() <= until) s.HandleEvent(s.next_event_s(), log);
  }

  PolcaConfig config_;
  InferencePowerModel model_;
  InferenceServerSettings settings_;
};

TEST_F(ServerModelTest, OneRequestRunsPrefillThenDecode) {
  InferenceServer s(settings_, Priority::kHigh);
  ServedLog log;
  EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerIdleW());
  s.Arrive({10, 1000, 11, Priority::kHigh}, 10);
  EXPECT_EQ(s.outstanding(), 1);
  EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerPromptW(1000, 1410));
  double prefill = model_.PromptSeconds(1000);
  EXPECT_NEAR(s.next_event_s(), 10 + prefill, 1e-9);
  s.HandleEvent(s.next_event_s(), log);
  EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerTokenW(1, 1410));
  Drain(s, log);
  ASSERT_EQ(log.latency_s.size(), 1u);
  // The prefill makes the first token; 10 decode iterations make the rest.
  EXPECT_NEAR(log.latency_s[0], prefill + 10 * model_.TokenIterationSeconds(1), 1e-9);
  EXPECT_EQ(log.generated_tokens, 11);
  EXPECT_EQ(s.outstanding(), 0);
  EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerIdleW());
  EXPECT_NEAR(log.busy_server_s, log.latency_s[0], 1e-9);
}

TEST_F(ServerModelTest, KeepsAServingEnginesCountersOnlyWhenAsked) {
  InferenceServer counted(settings_, Priority::kHigh, EngineCounters::kKept);
  InferenceServer plain(settings_, Priority::kHigh);
  ServedLog counted_log;
  ServedLog plain_log;
  for (InferenceServer* s : {&counted, &plain}) {
    s->Arrive({0, 1000, 11, Priority::kHigh}, 0);
    s->Arrive({0, 200, 1, Priority::kHigh}, 0);  // waits; done at its prefill
  }
  const double prefill = model_.PromptSeconds(1000);
  counted.HandleEvent(prefill, counted_log);
  plain.HandleEvent(prefill, plain_log);
  ServerCounters c = counted.counters(prefill);
  EXPECT_DOUBLE_EQ(c.prompt_tokens, 1000);
  EXPECT_EQ(c.first_tokens, 1);
  EXPECT_EQ(c.finished, 0);
  const double second = model_.PromptSeconds(200);  // the waiting one's prefill (decoding pauses)
  counted.HandleEvent(prefill + second, counted_log);
  plain.HandleEvent(prefill + second, plain_log);
  c = counted.counters(prefill + second);
  EXPECT_DOUBLE_EQ(c.prompt_tokens, 1200);
  EXPECT_EQ(c.first_tokens, 2);
  EXPECT_EQ(c.finished, 1);
  // Halfway through the first one's ten decode iterations, counted but not an event yet.
  const double iteration = model_.TokenIterationSeconds(1);
  EXPECT_NEAR(counted.counters(prefill + second + 5 * iteration).decode_tokens, 5, 1e-9);
  Drain(counted, counted_log);
  Drain(plain, plain_log);
  c = counted.counters(1e9);
  EXPECT_EQ(c.finished, 2);
  EXPECT_NEAR(c.decode_tokens, 10, 1e-9);
  // Counting changes no answer; a server that does not count reads zero.
  EXPECT_EQ(counted_log.latency_s, plain_log.latency_s);
  EXPECT_EQ(counted_log.generated_tokens, plain_log.generated_tokens);
  const ServerCounters none = plain.counters(1e9);
  EXPECT_EQ(none.prompt_tokens, 0);
  EXPECT_EQ(none.first_tokens, 0);
  EXPECT_EQ(none.finished, 0);
  EXPECT_EQ(none.decode_tokens, 0);
}

TEST_F(ServerModelTest, BatchesDecodeAndSlowsDownWithALockedClock) {
  auto run = [&](double freq) {
    InferenceServer s(settings_, Priority::kLow);
    s.SetLimits({freq, 0}, 0);
    ServedLog log;
    // The first request starts a prefill on its own; the seven arriving during it wait
    // and share the next prefill (3500 tokens <= 8192); then all eight decode together.
    for (int i = 0; i < 8; ++i) s.Arrive({0, 500, 100, Priority::kLow}, 0);
    EXPECT_EQ(s.in_prefill(), 1);
    EXPECT_EQ(s.waiting(), 7);
    EXPECT_NEAR(s.next_event_s(), model_.PromptSeconds(500) * model_.PromptSlowdown(freq), 1e-9);
    s.HandleEvent(s.next_event_s(), log);
    // The first decodes, paused, while the seven are in the prefill.
    EXPECT_EQ(s.decoding(), 1);
    EXPECT_EQ(s.in_prefill(), 7);
    EXPECT_EQ(s.waiting(), 0);
    EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerPromptW(3500, freq));
    s.HandleEvent(s.next_event_s(), log);
    EXPECT_EQ(s.decoding(), 8);
    EXPECT_EQ(s.in_prefill(), 0);
    EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerTokenW(8, freq));
    Drain(s, log);
    EXPECT_EQ(log.latency_s.size(), 8u);
    return log.latency_s.back();
  };
  auto expected = [&](double freq) {
    return (model_.PromptSeconds(500) + model_.PromptSeconds(3500)) * model_.PromptSlowdown(freq) +
           99 * model_.TokenIterationSeconds(8) * model_.TokenSlowdown(freq);
  };
  EXPECT_NEAR(run(1410), expected(1410), 1e-9);
  EXPECT_NEAR(run(1110), expected(1110), 1e-9);
  EXPECT_GT(expected(1110), expected(1410));
}

TEST_F(ServerModelTest, ClockChangeMidDecodeKeepsProgress) {
  InferenceServer s(settings_, Priority::kHigh);
  ServedLog log;
  s.Arrive({0, 100, 201, Priority::kHigh}, 0);
  double prefill = model_.PromptSeconds(100);
  s.HandleEvent(s.next_event_s(), log);
  double iteration = model_.TokenIterationSeconds(1);
  double half = prefill + 100 * iteration;  // 100 of 200 iterations done
  s.SetLimits({288, 0}, half);              // brake
  EXPECT_DOUBLE_EQ(s.power_w(), model_.ServerTokenW(1, 288));
  Drain(s, log);
  EXPECT_NEAR(log.latency_s[0], half + 100 * iteration * model_.TokenSlowdown(288), 1e-6);
}

TEST_F(ServerModelTest, NewArrivalsInterruptDecodeAndQueueWhenFull) {
  config_.service.max_batch = 2;
  InferencePowerModel model(config_);
  const InferenceServerSettings settings(model, config_);
  InferenceServer s(settings, Priority::kHigh);
  ServedLog log;
  s.Arrive({0, 100, 50, Priority::kHigh}, 0);
  s.HandleEvent(s.next_event_s(), log);  // prefill done, decoding 1
  s.Arrive({1, 200, 50, Priority::kHigh}, 1);
  EXPECT_DOUBLE_EQ(s.power_w(), model.ServerPromptW(200, 1410));  // a prefill pauses decoding
  s.Arrive({1.01, 300, 50, Priority::kHigh}, 1.01);               // batch will be full: waits
  EXPECT_EQ(s.outstanding(), 3);
  Drain(s, log);
  ASSERT_EQ(log.latency_s.size(), 3u);
  EXPECT_GT(log.latency_s[2], log.latency_s[0]);  // the third waited for a free slot
  EXPECT_EQ(log.generated_tokens, 150);
}

TEST_F(ServerModelTest, PowerCapBitesOnlyAfterTheResponseTime) {
  config_.control.power_cap_response_s = 0.5;
  InferencePowerModel model(config_);
  const InferenceServerSettings settings(model, config_);
  InferenceServer s(settings, Priority::kLow);
  s.SetLimits({1410, 300}, 0);
  ServedLog log;
  s.Arrive({0, 8000, 2, Priority::kLow}, 0);                       // a long prefill, about 2.3 s
  EXPECT_DOUBLE_EQ(s.power_w(), model.ServerPromptW(8000, 1410));  // spike escapes the cap
  EXPECT_DOUBLE_EQ(s.next_event_s(), 0.5);
  s.HandleEvent(0.5, log);
  double capped = model.PromptFreqUnderCap(8000, 300);
  EXPECT_NEAR(s.power_w(), model.ServerPromptW(8000, capped), 1e-6);
  Drain(s, log);
  double work_after = model.PromptSeconds(8000) - 0.5;
  EXPECT_NEAR(log.latency_s[0], 0.5 + work_after * model.PromptSlowdown(capped) + model.TokenIterationSeconds(1), 1e-6);
}

TEST_F(ServerModelTest, ALongQueueIsServedInArrivalOrder) {
  // 2,000 requests arrive at once (1 ns apart), each done at its prefill: the first starts a
  // prefill alone, the next prefills take the rest 32 at a time (the batch), in arrival order,
  // across the queue's compactions.
  InferenceServer s(settings_, Priority::kHigh);
  ServedLog log;
  const int n = 2000;
  const int batch = config_.service.max_batch;
  for (int i = 0; i < n; ++i) {
    s.Arrive({i * 1e-9, 100, 1, Priority::kHigh}, i * 1e-9);
    ASSERT_EQ(s.in_prefill(), 1);
    ASSERT_EQ(s.waiting(), i);
  }
  int left = n - 1;
  while (s.next_event_s() < 1e9) {
    s.HandleEvent(s.next_event_s(), log);
    const int taken = std::min(left, batch);
    left -= taken;
    ASSERT_EQ(s.in_prefill(), taken);
    ASSERT_EQ(s.waiting(), left);
    ASSERT_EQ(s.decoding(), 0);
    ASSERT_EQ(s.outstanding(), taken + left);
  }
  ASSERT_EQ(log.latency_s.size(), static_cast<size_t>(n));
  double previous_done = 0;
  for (int k = 0; k < n; ++k) {
    double done = log.latency_s[static_cast<size_t>(k)] + k * 1e-9;  // the k-th arrival
    if (k == 0 || (k - 1) % batch == 0) {
      EXPECT_GT(done, previous_done) << k;
      previous_done = done;
    } else {
      EXPECT_NEAR(done, previous_done, 1e-11) << k;
    }
  }
  EXPECT_EQ(s.outstanding(), 0);
  EXPECT_EQ(s.waiting(), 0);
}

}  // namespace
}  // namespace wattcut::polca
