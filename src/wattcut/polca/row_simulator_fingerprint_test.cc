// The simulator's answers, pinned: a fingerprint of every observable of short, overloaded runs
// (each policy, two seeds), recorded before the routing index replaced the scan over every
// server (issue 28). A speed-up that changed any answer, by one request routed elsewhere,
// changes the fingerprint.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "wattcut/polca/row_simulator.h"

namespace wattcut::polca {
namespace {

// FNV-1a, 64 bit, over the bytes of the values fed to it.
class Fingerprint {
 public:
  template <typename T>
  void Add(const T& value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char b : bytes) hash_ = (hash_ ^ b) * 0x100000001b3ULL;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// One request every 0.25 s for an hour, mixed lengths, on a row of 12 provisioned servers
// grown to 16: the policies act, and POLCA escalates to high priority.
uint64_t RunFingerprintOf(PolcaConfig config, PolicyKind policy, uint64_t seed) {
  std::vector<TraceRequest> requests;
  for (int i = 0; i < 14400; ++i) requests.push_back({i * 0.25, 150 + (i * 37) % 3000, 10 + (i * 13) % 400});
  RequestTrace trace = *RequestTrace::FromRequests(requests, "fingerprint");
  config.row.baseline_servers = 12;
  RowRunOptions options;
  options.policy = policy;
  options.servers = 16;
  options.duration_s = 4 * 3600;
  options.seed = seed;
  auto run = SimulateRow(config, trace, options);
  EXPECT_TRUE(run.ok()) << run.error().message;
  if (!run.ok()) return 0;
  Fingerprint f;
  for (float v : run->power_samples) f.Add(v);
  for (const PolicyAction& a : run->actions) {
    f.Add(a.t_s);
    f.Add(static_cast<int>(a.level));
    f.Add(a.brake);
  }
  for (const PriorityMetrics* m : {&run->high, &run->low}) {
    f.Add(m->completed);
    f.Add(m->latency_p50_s);
    f.Add(m->latency_p99_s);
    f.Add(m->generated_tokens);
    f.Add(m->busy_server_s);
  }
  f.Add(run->arrivals);
  f.Add(run->unfinished);
  f.Add(run->brake_events);
  f.Add(run->brake_active_s);
  f.Add(run->energy_kwh);
  return f.value();
}

uint64_t RunFingerprint(PolicyKind policy, uint64_t seed) {
  PolcaConfig config = *BuiltInConfig("a100");
  config.workload.peak_requests_per_server_s = 0.9;
  return RunFingerprintOf(config, policy, seed);
}

struct Pinned {
  PolicyKind policy;
  uint64_t seed;
  uint64_t fingerprint;
};

TEST(RowSimulatorFingerprint, AnswersAreThoseOfTheScanOverEveryServer) {
  const Pinned pinned[] = {
      {PolicyKind::kNone, 1, 0x4b96b48ba446d0bcULL},       {PolicyKind::kNone, 2, 0x082135b1f24730edULL},
      {PolicyKind::kBrakeOnly, 1, 0x0b994be1c38dc335ULL},  {PolicyKind::kBrakeOnly, 2, 0x5519300a5e69282fULL},
      {PolicyKind::kPolca, 1, 0xf1131f2aa117ea46ULL},      {PolicyKind::kPolca, 2, 0x1712e4800cae7a99ULL},
      {PolicyKind::kUniformCap, 1, 0x93e1f073630ad1c5ULL}, {PolicyKind::kUniformCap, 2, 0xa88ab2158a204b9eULL},
      {PolicyKind::kPowerCap, 1, 0xcf37eae9635a78a1ULL},   {PolicyKind::kPowerCap, 2, 0xe05d41df5ce9997aULL},
  };
  for (const Pinned& p : pinned) {
    const uint64_t got = RunFingerprint(p.policy, p.seed);
    EXPECT_EQ(got, p.fingerprint) << PolicyName(p.policy) << " seed " << p.seed;
  }
}

// Issue 51: the policies other than headroom answer on every config the project ships exactly as
// before the headroom policy's level ceilings and the load by work (pinned on the code before
// them): the H100 preset and configs/polca/'s two retuned A100 configs (their keys, inline).
TEST(RowSimulatorFingerprint, EveryShippedConfigAnswersAsBeforeTheHeadroomCeilings) {
  struct Shipped {
    const char* name;
    const char* text;
  };
  const Shipped configs[] = {
      {"h100", "base = h100\nworkload.peak_requests_per_server_s = 2.4\n"},
      {"a100-t85-out-of-band",
       "base = a100\npolicy.t1 = 0.85\npolicy.t1_release = 0.80\npolicy.t2 = 0.92\npolicy.t2_release = 0.87\n"
       "workload.peak_requests_per_server_s = 0.9\n"},
      {"a100-t88-in-band",
       "base = a100\ncontrol.actuation_latency_s = 0.01\npolicy.t1 = 0.88\npolicy.t1_release = 0.84\n"
       "policy.t2 = 0.95\npolicy.t2_release = 0.91\nworkload.peak_requests_per_server_s = 0.9\n"},
  };
  const uint64_t pinned[3][4] = {
      {0x55a6c840c24bc5a6ULL, 0x607ff7db996e2aecULL, 0x217e4c222e014667ULL, 0xba22abf346f964eeULL},
      {0xa09e3a0a7fb5e6ddULL, 0x0b994be1c38dc335ULL, 0x0881a65741df17e9ULL, 0xbd53f2bc5f5a1ab8ULL},
      {0x9450263d8bb01cedULL, 0x0b994be1c38dc335ULL, 0xc9969a790ab8d57fULL, 0xa04cc925912efc2aULL},
  };
  const PolicyKind policies[] = {PolicyKind::kPolca, PolicyKind::kBrakeOnly, PolicyKind::kUniformCap,
                                 PolicyKind::kPowerCap};
  for (size_t c = 0; c < 3; ++c) {
    Result<PolcaConfig> config = ParseConfig(configs[c].text, configs[c].name);
    ASSERT_TRUE(config.ok()) << config.error().message;
    for (size_t k = 0; k < 4; ++k) {
      const uint64_t got = RunFingerprintOf(*config, policies[k], 1);
      EXPECT_EQ(got, pinned[c][k]) << configs[c].name << " " << PolicyName(policies[k]) << std::hex << " 0x" << got;
    }
  }
}

}  // namespace
}  // namespace wattcut::polca
