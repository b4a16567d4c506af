// Who holds which GPU of the node: the agent's leases, as pure state over a time the caller
// passes in (seconds of a monotonic clock). A GPU has at most one lease; a lease belongs to one
// holder, a process on the Unix socket or a token on one TCP connection, and ends when its holder
// releases it, when the holder is gone (the caller says who is: a process that exited, a
// connection that closed), or when it is not renewed within its ttl. Ending a lease is only
// bookkeeping here: what the holder set is undone by the node agent (node_agent.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::agent {

struct LeaseHolder {
  // kZeusdClient: a zeusd client over TCP, by its token's user and its address; alive while one of
  // its connections is open, or for a grace after the last closed (NodeAgent decides).
  enum class Kind { kProcess, kConnection, kZeusdClient };
  Kind kind = Kind::kProcess;
  // kProcess: the peer's pid and uid (SO_PEERCRED).
  int pid = 0;
  int uid = -1;
  // kConnection: the line of the token it presented, and the TCP connection.
  int token_line = 0;
  uint64_t connection_id = 0;
  std::string peer_address;

  static LeaseHolder Process(int pid, int uid);
  static LeaseHolder Connection(int token_line, uint64_t connection_id, std::string peer_address);
  static LeaseHolder ZeusdClient(std::string sub, std::string peer_address);
  std::string zeusd_sub;  // kZeusdClient: its token's sub
  // kProcess: the batch job whose credential it presented (job_table.h); empty: none.
  std::string job_id;
  // The same holder: the same process (with the same job's credential, or none), the same token on
  // the same connection, or the same zeusd user from the same address.
  bool operator==(const LeaseHolder& other) const;
  // "pid 4242 (uid 1000)", "pid 4242 (uid 1000, job 77)", "the token of line 3 on connection 17 from 10.0.0.5".
  std::string Description() const;
};

struct Lease {
  uint64_t id = 0;
  LeaseHolder holder;
  std::vector<int> gpus;
  double ttl_s = 0;
  double renewed_at_s = 0;
  double expires_at_s() const { return renewed_at_s + ttl_s; }
};

enum class LeaseEnd { kReleased, kHolderExited, kExpired, kConnectionClosed, kJobEnded };
// "released", "exited", "expired", "connection_closed", "job_ended": metrics labels and logs.
const char* LeaseEndName(LeaseEnd end);

struct EndedLease {
  Lease lease;
  LeaseEnd reason;
};

class LeaseTable {
 public:
  explicit LeaseTable(int gpu_count);

  // A new lease on `gpus` for `holder`. Fails with kNotFound for a GPU that does not exist and
  // kConflict for one another lease holds ("GPU 0 is leased by pid 4242 (uid 1000)"; a GPU the
  // same holder already leased names that lease), taking nothing then.
  Result<Lease> Acquire(const LeaseHolder& holder, const std::vector<int>& gpus, double ttl_s, double now_s);
  // Renews lease `id` from now. kNotFound for an unknown id (it ended, or the agent restarted);
  // kPermissionDenied when another holder asks.
  Result<Lease> Renew(uint64_t id, const LeaseHolder& holder, double now_s);
  // Ends lease `id` (the same errors as Renew).
  Result<EndedLease> Release(uint64_t id, const LeaseHolder& holder);

  // The lease on `gpu`, or nullptr (also for a GPU that does not exist).
  const Lease* LeaseOf(int gpu) const;
  // Ok when `holder` holds `gpu`; kNotFound for no such GPU; kPermissionDenied naming the
  // holder, or saying that nobody leased it ("lease it first: POST /v1/leases").
  Status CheckHolds(const LeaseHolder& holder, int gpu) const;

  // Ends every lease whose holder is not alive (`alive` is asked once per lease) or whose ttl has
  // run out at `now_s`; EndConnection every lease taken on a TCP connection that closed.
  std::vector<EndedLease> EndLeases(double now_s, const std::function<bool(const LeaseHolder&)>& alive);
  std::vector<EndedLease> EndConnection(uint64_t connection_id);
  // Ends every lease (the agent is stopping).
  std::vector<EndedLease> EndAll();
  // Ends every lease taken under batch job `job_id`'s credential (the job ended).
  std::vector<EndedLease> EndJob(const std::string& job_id);

  std::vector<Lease> Leases() const;
  int gpu_count() const { return static_cast<int>(holder_of_gpu_.size()); }

 private:
  EndedLease Remove(std::map<uint64_t, Lease>::iterator it, LeaseEnd reason);
  std::vector<EndedLease> EndIf(const std::function<bool(const LeaseHolder&)>& ends, LeaseEnd reason);

  std::map<uint64_t, Lease> leases_;
  std::vector<uint64_t> holder_of_gpu_;  // lease id per GPU, 0: free
  uint64_t next_id_ = 1;
};

}  // namespace wattcut::agent
