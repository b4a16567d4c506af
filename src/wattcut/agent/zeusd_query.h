// zeusd's query parameters, read as zeusd reads them (zeusd_routes.h, steps 4 and 5): each
// refusal answered with zeusd's status and words, and zeusd's way of telling per-device failures.
// Each function either returns the value or writes the answer (the caller then returns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "wattcut/base/error_code.h"

namespace wattcut::agent {

// The query's parameters against the endpoint's (`required` a subset of `allowed`): an unknown,
// repeated or missing one is 400, text/plain "Query deserialize error: ...".
bool CheckQuery(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& allowed,
                const std::vector<std::string>& required);

// `name` as "true" or "false".
std::optional<bool> BoolParam(const httplib::Request& req, httplib::Response& res, const std::string& name);

// An unsigned 32-bit query parameter, as zeusd's deserializer reads it.
std::optional<int64_t> U32Param(const httplib::Request& req, httplib::Response& res, const std::string& name);

// A device list: "0,1" (spaces around an index allowed), sorted, without repeats; absent: every
// device in `known`. `lower` is "GPU" or "CPU", for the messages; `write`: a setter's list (zeusd
// says an unknown device in text there, in JSON for its reads).
std::optional<std::vector<int>> DeviceIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& lower, const std::vector<int>& known, bool write = false);

// A stream's devices: `param` absent, all of `known`; ids it names that are not known: 400 with
// zeusd's "Unknown GPU indices: [5, 7]. Available: [0, 1]".
std::optional<std::vector<int>> StreamIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& kind, const std::vector<int>& known);

// A setter's failure as zeusd's statuses go: the request's fault 400, a permission 403, another
// holder's lease 409 (zeusd has no leases), the device's or the agent's fault 500.
int ZeusdStatusFor(ErrorCode code);

// Per-device failures, as zeusd aggregates them: the largest status, every device's message.
struct DeviceErrors {
  int status = 0;
  nlohmann::ordered_json errors = nlohmann::ordered_json::object();
  void Add(int id, int s, const std::string& message);
  // The errors answered, when there is one; false when there is none.
  bool Answered(httplib::Response& res) const;
};

}  // namespace wattcut::agent
