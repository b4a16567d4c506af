// libFuzzer entry point for the POLCA row config reader and its validation
// (wattcut/polca/polca_config.h): every input is a config or an error whose message
// holds no raw control byte, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/message_check.h"
#include "wattcut/polca/polca_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = wattcut::polca::ParseConfig(text, "fuzz.conf");
  if (!config.ok()) {
    wattcut::fuzz::CheckMessage(config.error().message);
    return 0;
  }
  if (auto valid = wattcut::polca::Validate(*config); !valid.ok()) wattcut::fuzz::CheckMessage(valid.error().message);
  return 0;
}
