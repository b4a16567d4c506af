// The routes over the job registry: the Zeus pipeline frequency optimizer's API (/register_job,
// /schedule, ...) and wattcut's /v1/jobs/... (docs/server.md, openapi.yaml). A table: each route
// is a method, a path pattern, the label its metrics and logs carry, whether it changes
// frequencies (the access policy may refuse those, auth.h), and a short handler that reads the
// request and answers with the registry's Answer. The server registers them (server.cc).
#pragma once

#include <httplib.h>

#include <functional>
#include <string>
#include <vector>

#include "wattcut/server/job_registry.h"

namespace wattcut::server {

// A route's work: the request, its body (read and size-checked; empty for GET) and the response.
using RouteHandler = std::function<void(const httplib::Request&, const std::string&, httplib::Response&)>;

struct Route {
  const char* method;  // GET, POST, PUT or DELETE
  std::string pattern;
  const char* label;
  bool changes_frequencies;
  RouteHandler handler;
};

// Every job route, answered by `registry`.
std::vector<Route> JobRoutes(JobRegistry& registry);

}  // namespace wattcut::server
