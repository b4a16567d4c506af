// A job as the listings show it: GET /v1/jobs/{id}, its entry in GET /v1/jobs, and its row on the
// status page (status_page.h). Reads only: nothing here changes the job or the store.
#pragma once

#include <nlohmann/json.hpp>

#include "wattcut/server/job.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

nlohmann::json JobJson(const Job& job) REQUIRES(job.mu());
nlohmann::json JobListEntry(const Job& job) REQUIRES(job.mu());
// The status page's row at `now_unix_s` (the caches of the AllMax point may be filled).
JobStatusView JobStatus(Job& job, double now_unix_s) REQUIRES(job.mu());

}  // namespace wattcut::server
