#include "wattcut/agent/lease_table.h"

#include <algorithm>

namespace wattcut::agent {

LeaseHolder LeaseHolder::Process(int pid, int uid) {
  LeaseHolder holder;
  holder.kind = Kind::kProcess;
  holder.pid = pid;
  holder.uid = uid;
  return holder;
}

LeaseHolder LeaseHolder::Connection(int token_line, uint64_t connection_id, std::string peer_address) {
  LeaseHolder holder;
  holder.kind = Kind::kConnection;
  holder.token_line = token_line;
  holder.connection_id = connection_id;
  holder.peer_address = std::move(peer_address);
  return holder;
}

LeaseHolder LeaseHolder::ZeusdClient(std::string sub, std::string peer_address) {
  LeaseHolder holder;
  holder.kind = Kind::kZeusdClient;
  holder.zeusd_sub = std::move(sub);
  holder.peer_address = std::move(peer_address);
  return holder;
}

bool LeaseHolder::operator==(const LeaseHolder& other) const {
  if (kind != other.kind) return false;
  if (kind == Kind::kProcess) return pid == other.pid && job_id == other.job_id;
  if (kind == Kind::kZeusdClient) return zeusd_sub == other.zeusd_sub && peer_address == other.peer_address;
  return token_line == other.token_line && connection_id == other.connection_id;
}

std::string LeaseHolder::Description() const {
  if (kind == Kind::kProcess) {
    return "pid " + std::to_string(pid) + " (uid " + std::to_string(uid) + (job_id.empty() ? "" : ", job " + job_id) +
           ")";
  }
  if (kind == Kind::kZeusdClient) return "zeusd client '" + zeusd_sub + "' at " + peer_address;
  return "the token of line " + std::to_string(token_line) + " on connection " + std::to_string(connection_id) +
         (peer_address.empty() ? std::string() : " from " + peer_address);
}

const char* LeaseEndName(LeaseEnd end) {
  switch (end) {
    case LeaseEnd::kReleased:
      return "released";
    case LeaseEnd::kHolderExited:
      return "exited";
    case LeaseEnd::kExpired:
      return "expired";
    case LeaseEnd::kConnectionClosed:
      return "connection_closed";
    case LeaseEnd::kJobEnded:
      return "job_ended";
  }
  return "unknown";
}

LeaseTable::LeaseTable(int gpu_count) : holder_of_gpu_(static_cast<size_t>(std::max(gpu_count, 0)), 0) {}

Result<Lease> LeaseTable::Acquire(const LeaseHolder& holder, const std::vector<int>& gpus, double ttl_s, double now_s) {
  for (int gpu : gpus) {
    if (gpu < 0 || gpu >= gpu_count()) {
      return Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(gpu_count()) +
                             " GPUs)");
    }
    const Lease* held = LeaseOf(gpu);
    if (held == nullptr) continue;
    if (held->holder == holder) {
      return Error::Conflict("GPU " + std::to_string(gpu) + " is already in your lease " + std::to_string(held->id) +
                             ": renew that one");
    }
    return Error::Conflict("GPU " + std::to_string(gpu) + " is leased by " + held->holder.Description());
  }
  Lease lease;
  lease.id = next_id_++;
  lease.holder = holder;
  lease.gpus = gpus;
  lease.ttl_s = ttl_s;
  lease.renewed_at_s = now_s;
  for (int gpu : gpus) holder_of_gpu_[static_cast<size_t>(gpu)] = lease.id;
  leases_.emplace(lease.id, lease);
  return lease;
}

namespace {

Error UnknownLease(uint64_t id) {
  return Error::NotFound("lease " + std::to_string(id) +
                         " does not exist (it ended, or the agent restarted): take a new one");
}

}  // namespace

Result<Lease> LeaseTable::Renew(uint64_t id, const LeaseHolder& holder, double now_s) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return UnknownLease(id);
  if (!(it->second.holder == holder)) {
    return Error::PermissionDenied("lease " + std::to_string(id) + " belongs to " + it->second.holder.Description());
  }
  it->second.renewed_at_s = now_s;
  return it->second;
}

Result<EndedLease> LeaseTable::Release(uint64_t id, const LeaseHolder& holder) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return UnknownLease(id);
  if (!(it->second.holder == holder)) {
    return Error::PermissionDenied("lease " + std::to_string(id) + " belongs to " + it->second.holder.Description());
  }
  return Remove(it, LeaseEnd::kReleased);
}

const Lease* LeaseTable::LeaseOf(int gpu) const {
  if (gpu < 0 || gpu >= gpu_count()) return nullptr;
  const uint64_t id = holder_of_gpu_[static_cast<size_t>(gpu)];
  if (id == 0) return nullptr;
  return &leases_.at(id);
}

Status LeaseTable::CheckHolds(const LeaseHolder& holder, int gpu) const {
  if (gpu < 0 || gpu >= gpu_count()) {
    return Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(gpu_count()) + " GPUs)");
  }
  const Lease* lease = LeaseOf(gpu);
  if (lease == nullptr) {
    return Error::PermissionDenied("GPU " + std::to_string(gpu) + " is not leased: lease it first (POST /v1/leases)");
  }
  if (!(lease->holder == holder)) {
    return Error::PermissionDenied("GPU " + std::to_string(gpu) + " is leased by " + lease->holder.Description());
  }
  return Status::Ok();
}

EndedLease LeaseTable::Remove(std::map<uint64_t, Lease>::iterator it, LeaseEnd reason) {
  EndedLease ended{std::move(it->second), reason};
  for (int gpu : ended.lease.gpus) holder_of_gpu_[static_cast<size_t>(gpu)] = 0;
  leases_.erase(it);
  return ended;
}

std::vector<EndedLease> LeaseTable::EndLeases(double now_s, const std::function<bool(const LeaseHolder&)>& alive) {
  std::vector<EndedLease> ended;
  for (auto it = leases_.begin(); it != leases_.end();) {
    auto next = std::next(it);
    if (alive && !alive(it->second.holder)) {
      ended.push_back(Remove(it, it->second.holder.kind == LeaseHolder::Kind::kProcess ? LeaseEnd::kHolderExited
                                                                                       : LeaseEnd::kConnectionClosed));
    } else if (now_s >= it->second.expires_at_s()) {
      ended.push_back(Remove(it, LeaseEnd::kExpired));
    }
    it = next;
  }
  return ended;
}

std::vector<EndedLease> LeaseTable::EndIf(const std::function<bool(const LeaseHolder&)>& ends, LeaseEnd reason) {
  std::vector<EndedLease> ended;
  for (auto it = leases_.begin(); it != leases_.end();) {
    auto next = std::next(it);
    if (ends(it->second.holder)) ended.push_back(Remove(it, reason));
    it = next;
  }
  return ended;
}

std::vector<EndedLease> LeaseTable::EndConnection(uint64_t connection_id) {
  return EndIf(
      [connection_id](const LeaseHolder& holder) {
        return holder.kind == LeaseHolder::Kind::kConnection && holder.connection_id == connection_id;
      },
      LeaseEnd::kConnectionClosed);
}

std::vector<EndedLease> LeaseTable::EndJob(const std::string& job_id) {
  return EndIf(
      [&job_id](const LeaseHolder& holder) {
        return holder.kind == LeaseHolder::Kind::kProcess && holder.job_id == job_id;
      },
      LeaseEnd::kJobEnded);
}

std::vector<EndedLease> LeaseTable::EndAll() {
  std::vector<EndedLease> ended;
  while (!leases_.empty()) ended.push_back(Remove(leases_.begin(), LeaseEnd::kReleased));
  return ended;
}

std::vector<Lease> LeaseTable::Leases() const {
  std::vector<Lease> all;
  for (const auto& [id, lease] : leases_) all.push_back(lease);
  return all;
}

}  // namespace wattcut::agent
