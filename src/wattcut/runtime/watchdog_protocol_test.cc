#include "wattcut/runtime/watchdog_protocol.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace wattcut::watchdog {
namespace {

// argv for ParseHelperCommandLine: the program name, then `args`.
Result<HelperArguments> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "wattcut-freq-setter");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return ParseHelperCommandLine(static_cast<int>(args.size()), argv.data());
}

TEST(HelperCommandLineTest, PassesOnlyWhatDiffersFromTheDefaults) {
  EXPECT_EQ(HelperCommandLine({.gpu = 1, .poll_interval_us = 500}),
            (std::vector<std::string>{"--gpu", "1", "--poll-interval-us", "500"}));
  EXPECT_EQ(HelperCommandLine({.gpu = 0,
                               .nvml_library = "/opt/nvml/libnvidia-ml.so.1",
                               .dry_run = true,
                               .require_memory_lock = true,
                               .poll_interval_us = 0}),
            (std::vector<std::string>{"--gpu", "0", "--nvml-library", "/opt/nvml/libnvidia-ml.so.1", "--dry-run",
                                      "--require-memory-lock", "--poll-interval-us", "0"}));
}

TEST(HelperCommandLineTest, TheWatchdogReadsWhatTheTrainingProcessWrites) {
  const HelperArguments written{.gpu = 3,
                                .nvml_library = "libnvidia-ml.so.550",
                                .dry_run = true,
                                .require_memory_lock = true,
                                .poll_interval_us = 250};
  auto read = Parse(HelperCommandLine(written));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->gpu, 3);
  EXPECT_EQ(read->nvml_library, "libnvidia-ml.so.550");
  EXPECT_TRUE(read->dry_run);
  EXPECT_TRUE(read->require_memory_lock);
  EXPECT_EQ(read->poll_interval_us, 250);

  auto defaults = Parse(HelperCommandLine({.gpu = 2}));
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(defaults->gpu, 2);
  EXPECT_EQ(defaults->nvml_library, "");
  EXPECT_FALSE(defaults->dry_run);
  EXPECT_FALSE(defaults->require_memory_lock);
  EXPECT_EQ(defaults->poll_interval_us, 0);
}

TEST(HelperCommandLineTest, AnUnknownArgumentOrAMissingValueIsNamed) {
  auto unknown = Parse({"--gpu", "0", "--verbose"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "unknown argument '--verbose' (this program is started by wattcut's frequency setter)");
  auto missing = Parse({"--dry-run", "--gpu"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "unknown argument '--gpu' (this program is started by wattcut's frequency setter)");
}

TEST(ReadyReplyTest, OkOrAnErrorWithItsMessage) {
  EXPECT_EQ(ReadyReply(Status::Ok()), "ok");
  EXPECT_EQ(ReadyReply(Error{"GPU 4 does not exist (2 GPUs)"}), "error: GPU 4 does not exist (2 GPUs)");
  const std::optional<Status> ok = ParseReadyReply(ReadyReply(Status::Ok()));
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->ok());
  const std::optional<Status> failed = ParseReadyReply(ReadyReply(Error{"GPU 4 does not exist (2 GPUs)"}));
  ASSERT_TRUE(failed.has_value());
  ASSERT_FALSE(failed->ok());
  EXPECT_EQ(failed->error().message, "GPU 4 does not exist (2 GPUs)");
}

TEST(ReadyReplyTest, AnythingElseMeansTheWatchdogEndedWithoutAnswering) {
  for (const std::string reply : {"", "o", "ok\n", "okay", "error:", "Error: x", "\x7f"}) {
    EXPECT_FALSE(ParseReadyReply(reply).has_value()) << "'" << reply << "'";
  }
  const std::optional<Status> empty_message = ParseReadyReply("error: ");
  ASSERT_TRUE(empty_message.has_value());
  EXPECT_FALSE(empty_message->ok());
}

TEST(SharedPageTest, ARequestNeedsAWakeUpOnlyWhenTheWatchdogSleeps) {
  auto shared = std::make_unique<Shared>();
  EXPECT_FALSE(PostRequest(*shared, 1200));
  EXPECT_EQ(shared->requested_mhz.load(), 1200);
  EXPECT_EQ(shared->request_seq.load(), 1u);
  shared->worker_sleeping.store(1);
  EXPECT_TRUE(PostRequest(*shared, 1000));
  EXPECT_EQ(shared->requested_mhz.load(), 1000);
  EXPECT_EQ(shared->request_seq.load(), 2u);
  EXPECT_EQ(shared->worker_sleeping.load(), 0);  // woken once: the next request needs no byte
  EXPECT_FALSE(PostRequest(*shared, 1100));
}

TEST(SharedPageTest, TheLastErrorIsReadAsWrittenAndCutToFit) {
  auto shared = std::make_unique<Shared>();
  EXPECT_EQ(ReadLastError(*shared), "");
  WriteLastError(*shared, "cannot lock GPU 0 SM clocks to 2000-2000 MHz: supported 210-1410 MHz");
  EXPECT_EQ(ReadLastError(*shared), "cannot lock GPU 0 SM clocks to 2000-2000 MHz: supported 210-1410 MHz");
  EXPECT_EQ(shared->error_seq.load() % 2, 0u);
  WriteLastError(*shared, "short");
  EXPECT_EQ(ReadLastError(*shared), "short");
  const std::string long_message(3 * kErrorSize, 'x');
  WriteLastError(*shared, long_message);
  EXPECT_EQ(ReadLastError(*shared), std::string(kErrorSize - 1, 'x'));
  CopyErrorText(shared->reset_error, long_message);
  EXPECT_EQ(std::string(shared->reset_error), std::string(kErrorSize - 1, 'x'));
}

}  // namespace
}  // namespace wattcut::watchdog
