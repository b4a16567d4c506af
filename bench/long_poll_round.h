// For the benches: schedule rounds of every rank of a job at once, as a cluster's ranks run
// them: one connection per rank to 127.0.0.1, every rank but the last asks GET /schedule and
// waits; once the server counts them all waiting (its wattcut_long_polls_waiting gauge), its
// threads are read and the last rank asks, which completes the round. All connections wait on
// one epoll thread here, so 16,384 ranks need 16,384 descriptors, not threads. Bounded: every
// wait has a limit, and a round gives up after two minutes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace wattcut::bench {

struct LongPollRound {
  int answered = 0;                  // ranks answered 200 with their own schedule
  int failed = 0;                    // the others (a wrong answer, an error, a closed connection)
  int waiting_seen = 0;              // what the gauge said before the last rank asked
  int server_threads = 0;            // the server's threads while they waited
  double all_answered_s = 0;         // from the first rank's request to the last answer
  double after_last_ask_s = 0;       // from the last rank's request to the last answer
  double server_cpu_s = 0;           // the server's CPU time over the round
  double server_rss_before_mb = 0;   // its resident memory before the round's requests (VmRSS)
  double server_rss_waiting_mb = 0;  // and while the ranks wait
  std::string first_failure;         // what went wrong first, for the report
};

class LongPollRounds {
 public:
  // `waiting_now`: the server's count of waiting long polls (its /metrics gauge), -1 if unknown.
  LongPollRounds(int port, std::string job_path, int ranks, pid_t server_pid, std::function<int()> waiting_now);
  ~LongPollRounds();
  LongPollRounds(const LongPollRounds&) = delete;
  LongPollRounds& operator=(const LongPollRounds&) = delete;

  // One round over the connections (opened by the first round, kept alive between rounds).
  LongPollRound Run();

 private:
  // Opens connections until there are `count`.
  bool ConnectUpTo(size_t count, std::string& error);

  int port_;
  std::string job_path_;
  int ranks_;
  pid_t server_pid_;
  std::function<int()> waiting_now_;
  std::vector<int> fds_;
};

// utime + stime of `pid`, seconds (/proc/PID/stat).
double CpuSeconds(pid_t pid);
// Peak resident memory of `pid`, MB (VmHWM).
double PeakMb(pid_t pid);
// Resident memory of `pid` now, MB (VmRSS).
double ResidentMb(pid_t pid);
// Threads of `pid` now.
int Threads(pid_t pid);

}  // namespace wattcut::bench
