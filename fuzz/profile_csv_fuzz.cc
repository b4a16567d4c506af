// libFuzzer entry point for the profile CSV reader (wattcut/profile/profile_csv.h): the
// first byte picks the number of stages the caller expects (0: any), the rest is the file.
// Every input must come back as a profile or an error whose message holds no raw control
// byte, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/message_check.h"
#include "wattcut/profile/profile_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int expected_stages = data[0] % 9;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto profile = wattcut::ParseProfileCsv(text, "fuzz.csv", expected_stages);
  if (!profile.ok()) wattcut::fuzz::CheckMessage(profile.error().message);
  return 0;
}
