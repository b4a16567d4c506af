// libFuzzer entry point for the request trace reader (wattcut/polca/request_trace.h,
// the Azure LLM inference trace format): every input is a trace or an error whose
// message holds no raw control byte, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/message_check.h"
#include "wattcut/polca/request_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto trace = wattcut::polca::RequestTrace::Parse(text, "fuzz.csv");
  if (!trace.ok()) wattcut::fuzz::CheckMessage(trace.error().message);
  return 0;
}
