// A wattcut service's base URL, as every wattcut client of a service takes it (the node agent,
// the planning server): `http://HOST:PORT` or `https://HOST:PORT`, HOST a host name (letters,
// digits, `. - _`), an IPv4 address or a bracketed IPv6 one, PORT 1-65535, a final `/` dropped
// and no other path (the API is under /v1 of it). One rule, so that a URL one part of wattcut
// accepts (the Slurm plugin, the row file) is one the part it is handed to accepts too.
//
// A client that cannot do everything the rule allows says so in its ServiceUrlForm: the training
// ranks' client of the planning server speaks plain HTTP (cpp-httplib without TLS) and takes the
// port as 80 where the URL leaves it out, so the Slurm plugin, which hands its URL to the ranks,
// checks it in that form.
#pragma once

#include <string>
#include <string_view>

#include "wattcut/base/result.h"

namespace wattcut::http {

struct ServiceUrlForm {
  bool https = true;              // false: an https:// URL is refused, saying why
  std::string_view default_port;  // empty: the URL must name its port
};

// The training ranks' client of the planning server (runtime/plan_server_client.h): plain HTTP,
// port 80 where the URL names none. The Slurm plugin checks the URL it hands the ranks in it.
inline constexpr ServiceUrlForm kPlanServerUrlForm{.https = false, .default_port = "80"};

struct ServiceUrl {
  std::string url;  // as given, without a final '/'
  bool https = false;
  std::string host;  // without brackets
  std::string port;  // digits, 1-65535 (the default port where the URL names none)
};

// Checks `url`; messages start with `what` and the URL ("agent URL 'x': expected ...").
Result<ServiceUrl> SplitServiceUrl(std::string_view url, std::string_view what, const ServiceUrlForm& form = {});

}  // namespace wattcut::http
