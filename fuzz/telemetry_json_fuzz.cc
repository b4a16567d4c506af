// libFuzzer entry point for the JSON telemetry readers (wattcut/telemetry/): a Prometheus
// query_range answer (the matrix, then as DCGM power) and the agent's readings stream. Every input
// is telemetry or an error whose message holds no raw control byte, never a crash, a hang or an
// exception; the corpus holds values and labels nested 100,000 deep, which crashed both readers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/message_check.h"
#include "wattcut/telemetry/agent_readings_stream.h"
#include "wattcut/telemetry/prometheus_matrix.h"
#include "wattcut/telemetry/prometheus_power.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto matrix = wattcut::telemetry::ParsePrometheusMatrix(text, "fuzz.json");
  if (!matrix.ok()) {
    wattcut::fuzz::CheckMessage(matrix.error().message);
  } else {
    auto power = wattcut::telemetry::PowerFromPrometheus(*matrix, {});
    if (!power.ok()) wattcut::fuzz::CheckMessage(power.error().message);
  }
  auto stream = wattcut::telemetry::ParseAgentReadingsStream(text, "fuzz.ndjson", "node");
  if (!stream.ok()) wattcut::fuzz::CheckMessage(stream.error().message);
  return 0;
}
