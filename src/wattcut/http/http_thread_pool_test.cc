#include "wattcut/http/http_thread_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

namespace wattcut::http {
namespace {

TEST(HttpThreadPool, RunsEveryQueuedJobBeforeShuttingDown) {
  HttpThreadPool pool;
  ASSERT_TRUE(pool.Start(4).ok());
  EXPECT_EQ(pool.num_threads(), 4u);
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) pool.enqueue([&ran] { ++ran; });
  pool.shutdown();
  EXPECT_EQ(ran.load(), 1000);
  EXPECT_EQ(pool.num_threads(), 0u);
}

// Under an address-space limit that leaves room for a few dozen 8 MiB thread stacks,
// asking for a thousand threads is an error that says how many started, not a crash or a
// hang (httplib's own pool ended in std::terminate there). Checked in a child process,
// whose limit does not touch this one.
TEST(HttpThreadPool, AThreadThatCannotStartIsAnError) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit as{};
    getrlimit(RLIMIT_AS, &as);
    const rlimit small{uint64_t{512} << 20, as.rlim_max};
    if (setrlimit(RLIMIT_AS, &small) != 0) _exit(3);
    HttpThreadPool pool;
    Status s = pool.Start(1000);
    if (s.ok()) _exit(4);
    if (s.error().message.find("cannot start 1000 HTTP threads") == std::string::npos) _exit(5);
    if (pool.num_threads() != 0) _exit(6);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: setrlimit failed, 4: all threads started, 5: message, 6: threads left";
}

}  // namespace
}  // namespace wattcut::http
