#include "wattcut/row_control/row_agent_client.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/http_status.h"
#include "wattcut/row_control/answer_json.h"

namespace wattcut::row_control {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxReadingsAnswerBytes = size_t{4} << 20;  // a readings answer of a 16-GPU node is ~3 KB
// The server's power alone (docs/agent.md): an eighth of the bytes of every GPU's readings.
constexpr const char* kPowerPath = "/v1/readings/server";

// A ceiling every agent refuses (0 MHz is out of range) whatever the token may do: the scope check.
constexpr std::string_view kScopeProbe = R"({"mhz":0,"lease_s":1,"reason":"scope-check"})";

// How the controller reaches a server's agent (both transports: HttpClient, ConcurrentRequests).
http::HttpEndpoint AgentEndpoint(const RowServer& server, const std::string& token, const AgentTimeouts& timeouts) {
  http::HttpEndpoint endpoint;
  endpoint.base_url = server.agent_url;
  endpoint.bearer_token = token;
  endpoint.connect_timeout_s = timeouts.connect_timeout_s;
  endpoint.timeout_s = timeouts.request_timeout_s;
  endpoint.max_response_bytes = kMaxReadingsAnswerBytes;
  return endpoint;
}

std::string CeilingsBody(int mhz, int lease_s, const std::string& reason) {
  return json{{"mhz", mhz}, {"lease_s", lease_s}, {"reason", reason}}.dump();
}

}  // namespace

AgentTimeouts AgentTimeouts::ForPeriod(double telemetry_period_s) {
  const double period_s = std::isfinite(telemetry_period_s) && telemetry_period_s > 0 ? telemetry_period_s : 1.0;
  AgentTimeouts timeouts;
  timeouts.connect_timeout_s = std::clamp(period_s / 4, 0.05, 2.0);
  timeouts.request_timeout_s = std::clamp(period_s / 2, 0.05, 5.0);
  return timeouts;
}

RowAgentClient::RowAgentClient(RowServer server, std::unique_ptr<http::HttpClient> client)
    : server_(std::move(server)), client_(std::move(client)) {}

Result<std::unique_ptr<RowAgentClient>> RowAgentClient::Create(const RowServer& server, const std::string& token,
                                                               const AgentTimeouts& timeouts) {
  const std::string where = "server " + server.name + " (" + server.agent_url + "): ";
  if (token.empty()) return Error{where + "no token: the row controller presents the row's token to every agent"};
  auto client = http::HttpClient::Create(AgentEndpoint(server, token, timeouts));
  if (!client.ok()) return client.error().WithContext(where);
  return std::unique_ptr<RowAgentClient>(new RowAgentClient(server, std::move(*client)));
}

std::string RowAgentClient::Where(std::string_view method, std::string_view path) const {
  return "server " + server_.name + " (" + server_.agent_url + "): " + std::string(method) + " " + std::string(path) +
         ": ";
}

Result<http::HttpResponse> RowAgentClient::Accepted(Result<http::HttpResponse> answer, std::string_view method,
                                                    std::string_view path) const {
  if (!answer.ok()) return answer.error().WithContext(Where(method, path));
  if (answer->status < 200 || answer->status >= 300) {
    Error refusal = RefusalOf(*answer);
    if (answer->status == 401) {
      refusal.message = "the agent refused the row's token (" + refusal.message +
                        "): --token-file must hold a token of the agent's token file";
    } else if (answer->status == 403) {
      refusal.message =
          "the agent refused the request (" + refusal.message + "): the row's token needs the agent's 'row' scope";
    }
    return refusal.WithContext(Where(method, path));
  }
  return answer;
}

Result<AgentIdentity> RowAgentClient::Check() {
  auto agent = client_->Request("GET", "/v1/agent");
  if (!Accepted(agent, "GET", "/v1/agent").ok()) return IdentityOf(std::move(agent), Error{"not asked"});
  return IdentityOf(std::move(agent), client_->Request("PUT", "/v1/ceilings", kScopeProbe));
}

Result<AgentIdentity> RowAgentClient::IdentityOf(Result<http::HttpResponse> agent,
                                                 Result<http::HttpResponse> probe) const {
  auto answer = Accepted(std::move(agent), "GET", "/v1/agent");
  if (!answer.ok()) return answer.error();
  auto doc = ParseObject(answer->body);
  if (!doc.ok()) return doc.error().WithContext(Where("GET", "/v1/agent"));
  AgentIdentity identity;
  auto hostname = StringField(*doc, "hostname", "hostname");
  auto version = StringField(*doc, "version", "version");
  auto gpu_count = IntField(*doc, "gpu_count", "gpu_count", 0);
  if (!hostname.ok()) return hostname.error().WithContext(Where("GET", "/v1/agent"));
  if (!version.ok()) return version.error().WithContext(Where("GET", "/v1/agent"));
  if (!gpu_count.ok()) return gpu_count.error().WithContext(Where("GET", "/v1/agent"));
  identity.hostname = *hostname;
  identity.version = *version;
  identity.gpu_count = *gpu_count;

  // The scope probe: a ceiling the agent refuses as out of range when the token may set ceilings,
  // with a 403 when it may not. Either way nothing changes.
  if (!probe.ok()) return probe.error().WithContext(Where("PUT", "/v1/ceilings"));
  if (probe->status == 401 || probe->status == 403) {
    return Error::PermissionDenied("the token lacks the 'row' scope (" + RefusalOf(*probe).message +
                                   "): the row controller sets ceilings; give it a 'row' token of the agent's "
                                   "token file")
        .WithContext(Where("PUT", "/v1/ceilings"));
  }
  if (probe->status != 400 && probe->status != 422) {
    return Error::Malformed("the agent answered a ceiling of 0 MHz with HTTP " + std::to_string(probe->status) +
                            "; expected it refused (400 or 422): is this a wattcut agent?")
        .WithContext(Where("PUT", "/v1/ceilings"));
  }
  return identity;
}

Result<ServerPowerSample> RowAgentClient::ReadPower() { return PowerOf(client_->Request("GET", kPowerPath)); }

Result<ServerPowerSample> RowAgentClient::PowerOf(Result<http::HttpResponse> reading) const {
  auto answer = Accepted(std::move(reading), "GET", kPowerPath);
  if (!answer.ok()) return answer.error();
  auto named = [&](const Error& error) { return error.WithContext(Where("GET", kPowerPath)); };
  auto doc = ParseObject(answer->body);
  if (!doc.ok()) return named(doc.error());
  auto server = kAnswerFields.Object(FieldOf(*doc, "server"));
  if (!server.ok()) return named(server.error());
  auto power_w = NumberField(**server, "power_w", "server.power_w", 0);
  if (!power_w.ok()) return named(power_w.error());
  auto source = StringField(**server, "source", "server.source");
  if (!source.ok()) return named(source.error());
  auto time_s = NumberField(*doc, "time_s", "time_s", 0);
  if (!time_s.ok()) return named(time_s.error());
  auto gpu_count = IntField(*doc, "gpu_count", "gpu_count", 0);
  if (!gpu_count.ok()) return named(gpu_count.error());
  ServerPowerSample sample;
  sample.power_w = *power_w;
  sample.source = std::move(*source);
  sample.agent_time_s = *time_s;
  sample.gpu_count = *gpu_count;
  if (auto which = doc->find("gpu_power"); which != doc->end() && which->is_string()) {
    sample.gpu_power = which->get<std::string>();
  }
  return sample;
}

Status RowAgentClient::SetCeilings(int mhz, int lease_s, const std::string& reason) {
  return CommandDone(client_->Request("PUT", "/v1/ceilings", CeilingsBody(mhz, lease_s, reason)), "PUT",
                     "/v1/ceilings");
}

Status RowAgentClient::ClearCeilings() {
  return CommandDone(client_->Request("DELETE", "/v1/ceilings"), "DELETE", "/v1/ceilings");
}

Status RowAgentClient::CommandDone(Result<http::HttpResponse> answer, std::string_view method,
                                   std::string_view path) const {
  auto accepted = Accepted(std::move(answer), method, path);
  if (!accepted.ok()) return accepted.error();
  return Status::Ok();
}

Result<AgentCeilings> RowAgentClient::ReadCeilings() { return CeilingsOf(client_->Request("GET", "/v1/state")); }

Result<AgentCeilings> RowAgentClient::CeilingsOf(Result<http::HttpResponse> state) const {
  auto answer = Accepted(std::move(state), "GET", "/v1/state");
  if (!answer.ok()) return answer.error();
  auto named = [&](const Error& error) { return error.WithContext(Where("GET", "/v1/state")); };
  auto doc = ParseObject(answer->body);
  if (!doc.ok()) return named(doc.error());
  auto gpus = ArrayField(*doc, "gpus");
  if (!gpus.ok()) return named(gpus.error());
  AgentCeilings ceilings;
  ceilings.gpu_count = static_cast<int>((*gpus)->size());
  for (size_t i = 0; i < (*gpus)->size(); ++i) {
    const json& gpu = (**gpus)[i];
    const std::string at = "gpus[" + std::to_string(i) + "]";
    if (!gpu.is_object()) return named(kAnswerFields.Expected({&gpu, at}, "an object"));
    auto index = IntField(gpu, "gpu", at + ".gpu", 0);
    if (!index.ok()) return named(index.error());
    auto ceiling = gpu.find("ceiling");
    if (ceiling != gpu.end() && ceiling->is_null()) continue;
    if (ceiling == gpu.end() || !ceiling->is_object()) {
      return named(kAnswerFields.Expected(FieldOf(gpu, "ceiling", at), "an object or null"));
    }
    GpuCeiling one;
    one.gpu = *index;
    auto mhz = IntField(*ceiling, "mhz", at + ".ceiling.mhz", 1);
    if (!mhz.ok()) return named(mhz.error());
    auto reason = StringField(*ceiling, "reason", at + ".ceiling.reason");
    if (!reason.ok()) return named(reason.error());
    auto expires_in_s = NumberField(*ceiling, "expires_in_s", at + ".ceiling.expires_in_s", 0);
    if (!expires_in_s.ok()) return named(expires_in_s.error());
    one.mhz = *mhz;
    one.reason = std::move(*reason);
    one.expires_in_s = *expires_in_s;
    ceilings.ceilings.push_back(std::move(one));
  }
  std::sort(ceilings.ceilings.begin(), ceilings.ceilings.end(),
            [](const GpuCeiling& a, const GpuCeiling& b) { return a.gpu < b.gpu; });
  return ceilings;
}

// ---------------------------------------------------------------------------------------------
// RowAgents

Result<std::unique_ptr<RowAgents>> RowAgents::Create(const std::vector<RowServer>& servers, const std::string& token,
                                                     const AgentTimeouts& timeouts) {
  std::unique_ptr<RowAgents> agents(new RowAgents());
  std::vector<http::HttpEndpoint> endpoints;
  for (const RowServer& server : servers) {
    auto client = RowAgentClient::Create(server, token, timeouts);
    if (!client.ok()) return client.error();
    agents->clients_.push_back(std::move(*client));
    endpoints.push_back(AgentEndpoint(server, token, timeouts));
  }
  auto requests = http::ConcurrentRequests::Create(std::move(endpoints));
  if (!requests.ok()) return requests.error().WithContext("the row controller's agent connections: ");
  agents->requests_ = std::move(*requests);
  return agents;
}

std::vector<Result<http::HttpResponse>> RowAgents::AskEvery(const std::string& method, const std::string& path,
                                                            const std::string& body, Clock::time_point deadline) {
  std::vector<http::HttpCall> calls;
  calls.reserve(size());
  for (size_t i = 0; i < size(); ++i) calls.push_back({i, method, path, body});
  return requests_->Run(calls, deadline);
}

Result<std::vector<AgentIdentity>> RowAgents::CheckAll(Clock::time_point deadline) {
  // Each agent's two requests in one run: they go one after the other on its connection.
  std::vector<http::HttpCall> calls;
  for (size_t i = 0; i < size(); ++i) {
    calls.push_back({i, "GET", "/v1/agent", ""});
    calls.push_back({i, "PUT", "/v1/ceilings", std::string(kScopeProbe)});
  }
  std::vector<Result<http::HttpResponse>> answers = requests_->Run(calls, deadline);
  std::vector<AgentIdentity> identities;
  std::string failures;
  size_t failed = 0;
  ErrorCode code = ErrorCode::kUnavailable;
  for (size_t i = 0; i < size(); ++i) {
    Result<AgentIdentity> one = clients_[i]->IdentityOf(std::move(answers[2 * i]), std::move(answers[2 * i + 1]));
    if (one.ok()) {
      identities.push_back(std::move(*one));
      continue;
    }
    if (failed == 0) code = one.error().code;
    if (++failed <= 20) failures += "\n  " + one.error().message;
  }
  if (failed > 0) {
    if (failed > 20) failures += "\n  (and " + std::to_string(failed - 20) + " more)";
    return Error{
        std::to_string(failed) + " of the row's " + std::to_string(size()) + " agents cannot be used:" + failures,
        code};
  }
  return identities;
}

std::vector<Result<ServerPowerSample>> RowAgents::ReadAll(Clock::time_point deadline) {
  const std::string path = instant_gpu_power_ ? std::string(kPowerPath) + "?gpu_power=instant" : kPowerPath;
  std::vector<Result<http::HttpResponse>> answers = AskEvery("GET", path, "", deadline);
  std::vector<Result<ServerPowerSample>> samples;
  samples.reserve(size());
  for (size_t i = 0; i < size(); ++i) samples.push_back(clients_[i]->PowerOf(std::move(answers[i])));
  return samples;
}

std::vector<Result<AgentCeilings>> RowAgents::ReadAllCeilings(Clock::time_point deadline) {
  std::vector<Result<http::HttpResponse>> answers = AskEvery("GET", "/v1/state", "", deadline);
  std::vector<Result<AgentCeilings>> ceilings;
  ceilings.reserve(size());
  for (size_t i = 0; i < size(); ++i) ceilings.push_back(clients_[i]->CeilingsOf(std::move(answers[i])));
  return ceilings;
}

std::vector<Status> RowAgents::SendAll(const std::vector<AgentCommand>& commands, Clock::time_point deadline) {
  std::vector<Status> statuses(commands.size());
  std::vector<http::HttpCall> calls;
  std::vector<size_t> command_of;  // call -> command
  for (size_t c = 0; c < commands.size(); ++c) {
    const AgentCommand& command = commands[c];
    if (command.server >= size()) {
      statuses[c] = Error{"command " + std::to_string(c) + " names server " + std::to_string(command.server) +
                          " of a row of " + std::to_string(size())};
      continue;
    }
    if (command.kind == AgentCommand::Kind::kSetCeilings) {
      calls.push_back(
          {command.server, "PUT", "/v1/ceilings", CeilingsBody(command.mhz, command.lease_s, command.reason)});
    } else {
      calls.push_back({command.server, "DELETE", "/v1/ceilings", ""});
    }
    command_of.push_back(c);
  }
  // A server's calls run in the order given (ConcurrentRequests' rule for one endpoint).
  std::vector<Result<http::HttpResponse>> answers = requests_->Run(calls, deadline);
  for (size_t k = 0; k < calls.size(); ++k) {
    const AgentCommand& command = commands[command_of[k]];
    statuses[command_of[k]] =
        clients_[command.server]->CommandDone(std::move(answers[k]), calls[k].method, calls[k].path);
  }
  return statuses;
}

}  // namespace wattcut::row_control
