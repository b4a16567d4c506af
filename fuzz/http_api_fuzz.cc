// libFuzzer entry point for the server's request parsers: the first byte picks the
// request kind, the rest is the request body (or query value). Every input must come
// back as a value or an error, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/message_check.h"
#include "wattcut/http/error_body.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/measured_gpu_energy.h"

namespace {

using nlohmann::json;
using wattcut::Result;
namespace server = wattcut::server;

template <typename T>
void Check(const Result<T>& result) {
  if (!result.ok()) {
    // Error messages are returned to clients inside JSON (must always serialise) and end
    // up in logs and terminals (no raw control bytes).
    wattcut::fuzz::CheckMessage(result.error().message);
    std::string body = wattcut::http::ErrorBody(result.error().message);
    if (body.empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t kind = data[0];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (kind % 10 == 9) {
    Check(server::ParseNonNegativeInteger("rank", body));
    return 0;
  }
  auto parsed = server::ParseJsonBody(body);
  Check(parsed);
  if (!parsed.ok()) return 0;
  const json& j = *parsed;
  switch (kind % 10) {
    case 0: {
      auto r = server::JobRegistrationFromJson(j);
      Check(r);
      if (r.ok()) (void)server::ToJson(r->info).dump();
      break;
    }
    case 1: {
      auto r = server::RankInfoFromJson(j);
      Check(r);
      if (r.ok()) (void)server::ToJson(*r).dump();
      break;
    }
    case 2: {
      auto r = server::ProfilingResultFromJson(j);
      Check(r);
      if (r.ok()) (void)server::ToJson(*r).dump();
      break;
    }
    case 3: {
      auto r = server::RankProfileFromJson(j);
      Check(r);
      if (r.ok()) (void)server::ToJson(*r).dump();
      break;
    }
    case 4: {
      auto r = server::PlannerSettingsFromJson(j);
      Check(r);
      if (r.ok()) (void)server::ToJson(*r).dump();
      break;
    }
    case 5:
      Check(server::ProfileUploadFromJson(j));
      break;
    case 6:
      Check(server::StragglerReportFromJson(j));
      break;
    case 7: {
      auto r = server::PlanSelectionFromJson(j);
      Check(r);
      if (r.ok()) (void)r->ToJson().dump();
      break;
    }
    default: {
      // Every parser on the same document.
      auto measured = server::NodeGpuEnergy::FromJson(j);
      Check(measured);
      if (measured.ok()) (void)measured->ToJson().dump();
      Check(server::JobRegistrationFromJson(j));
      Check(server::RankInfoFromJson(j));
      Check(server::ProfilingResultFromJson(j));
      Check(server::RankProfileFromJson(j));
      auto target = server::PowerTargetFromJson(j);
      Check(target);
      if (target.ok()) (void)target->ToJson().dump();
      break;
    }
  }
  return 0;
}
