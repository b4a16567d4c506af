// libFuzzer entry point for PUT /v1/jobs/{id}/deadline_schedule: the request body read as the
// server reads it (server/job_settings.h: DeadlineScheduleSpec::FromRequestJson), then its schedule computed as the
// server computes it (server/deadline_following.h: ComputeDeadline, its CSV series and the
// deadline scheduler) on a hand-made three-point frontier, starting 2026-12-02T00:00Z when the
// body gives no start. Every input is a schedule or an error whose message holds no raw control
// byte, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/message_check.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/registry_testing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace server = wattcut::server;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto parsed = server::ParseJsonBody(body);
  if (!parsed.ok()) {
    wattcut::fuzz::CheckMessage(parsed.error().message);
    return 0;
  }
  auto spec = server::DeadlineScheduleSpec::FromRequestJson(*parsed);
  if (!spec.ok()) {
    wattcut::fuzz::CheckMessage(spec.error().message);
    return 0;
  }
  static const wattcut::Frontier frontier = server::testing::ThreePointFrontier();
  server::JobInfo info;
  info.dp_degree = 2;
  info.world_size = 2;
  server::DeadlineFollowing following{*spec, {}, {}, 1, {}};
  wattcut::Status computed = server::ComputeDeadline(following, frontier, info, 1'796'169'600);
  if (!computed.ok()) wattcut::fuzz::CheckMessage(computed.error().message);
  return 0;
}
