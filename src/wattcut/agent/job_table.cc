#include "wattcut/agent/job_table.h"

#include <algorithm>

#include <openssl/rand.h>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/bearer_token.h"

namespace wattcut::agent {

Result<std::string> NewJobCredential() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Error{"cannot make a job credential: no randomness (RAND_bytes)"};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

Result<JobTable::Registered> JobTable::Register(NodeJob job) {
  if (Status s = CheckJobId(job.id, "job"); !s.ok()) return s.error();
  std::sort(job.gpus.begin(), job.gpus.end());
  job.gpus.erase(std::unique(job.gpus.begin(), job.gpus.end()), job.gpus.end());
  auto it = jobs_.find(job.id);
  if (it == jobs_.end()) {
    NodeJob& stored = jobs_[job.id];
    stored = std::move(job);
    return Registered{stored, true};
  }
  NodeJob& stored = it->second;
  if (stored.uid != job.uid) {
    return Error::Conflict("job " + stored.id + " is registered for uid " + std::to_string(stored.uid) + ", not uid " +
                           std::to_string(job.uid));
  }
  for (int gpu : job.gpus) {
    if (std::find(stored.gpus.begin(), stored.gpus.end(), gpu) != stored.gpus.end()) continue;
    stored.gpus.push_back(gpu);
    stored.energy_at_start_mj[gpu] = job.energy_at_start_mj[gpu];
  }
  std::sort(stored.gpus.begin(), stored.gpus.end());
  return Registered{stored, false};
}

const NodeJob* JobTable::Find(std::string_view id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::optional<JobTable::CredentialMatch> JobTable::FindCredential(std::string_view presented) const {
  // Every credential is compared, with no early exit, so the time does not tell whether or where
  // one matched.
  std::optional<CredentialMatch> match;
  for (const auto& [id, job] : jobs_) {
    if (http::ConstantTimeEquals(presented, job.credential) && !match) match = CredentialMatch{id, false};
  }
  for (const auto& [credential, id] : ended_) {
    if (http::ConstantTimeEquals(presented, credential) && !match) match = CredentialMatch{id, true};
  }
  return match;
}

void JobTable::MarkTouched(std::string_view id) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) it->second.touched = true;
}

Result<NodeJob> JobTable::End(std::string_view id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Error::NotFound("job " + PrintableText(std::string(id), 80) + " is not registered");
  NodeJob job = std::move(it->second);
  jobs_.erase(it);
  ended_.emplace_back(job.credential, job.id);
  if (ended_.size() > kRememberedEndedJobs) ended_.pop_front();
  return job;
}

std::vector<NodeJob> JobTable::Jobs() const {
  std::vector<NodeJob> all;
  for (const auto& [id, job] : jobs_) all.push_back(job);
  return all;
}

void JobTable::Restore(std::vector<NodeJob> jobs) {
  for (NodeJob& job : jobs) {
    if (!CheckJobId(job.id, "job").ok()) continue;
    const std::string id = job.id;
    jobs_[id] = std::move(job);
  }
}

}  // namespace wattcut::agent
