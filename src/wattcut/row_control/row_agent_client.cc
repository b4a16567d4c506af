#include "wattcut/row_control/row_agent_client.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/http_status.h"

namespace wattcut::row_control {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxAnswerBytes = size_t{4} << 20;  // a readings answer of a 16-GPU node is ~3 KB
constexpr size_t kDefaultMaxThreads = 32;

// The agent's {"error","code"} of a refused request, or what can be said without one.
Error RefusalOf(const http::HttpResponse& answer) {
  Error error = http::ErrorOfAnswer(answer.status, answer.body);
  json body = json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  return body.is_object() && body.contains("error") ? error.WithContext("HTTP " + std::to_string(answer.status) + ": ")
                                                    : error;
}

Result<json> ParseObject(const std::string& body) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error::Malformed("the answer is not JSON: '" + PrintableText(body, 120) + "'");
  if (!doc.is_object()) return Error::Malformed("the answer is not a JSON object: '" + PrintableText(body, 120) + "'");
  return doc;
}

std::string Shown(const json& value) { return PrintableText(value.dump(), 80); }

// A finite number at `field` of `object`, >= minimum.
Result<double> NumberField(const json& object, const std::string& name, const std::string& field, double minimum) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected a number");
  if (!it->is_number()) return Error::Malformed("field '" + field + "': expected a number, got " + Shown(*it));
  double value = it->get<double>();
  if (!std::isfinite(value) || value < minimum) {
    return Error::Malformed("field '" + field + "': expected a finite number >= " +
                            PrintableText(json(minimum).dump()) + ", got " + Shown(*it));
  }
  return value;
}

Result<int> IntField(const json& object, const std::string& name, const std::string& field, int minimum) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected an integer");
  if (!it->is_number_integer()) {
    return Error::Malformed("field '" + field + "': expected an integer, got " + Shown(*it));
  }
  int64_t value = it->get<int64_t>();
  if (value < minimum || value > 1'000'000'000) {
    return Error::Malformed("field '" + field + "': expected an integer >= " + std::to_string(minimum) + ", got " +
                            Shown(*it));
  }
  return static_cast<int>(value);
}

Result<std::string> StringField(const json& object, const std::string& name, const std::string& field) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected a string");
  if (!it->is_string()) return Error::Malformed("field '" + field + "': expected a string, got " + Shown(*it));
  return it->get<std::string>();
}

Result<const json*> ArrayField(const json& object, const std::string& name) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + name + "' is missing; expected an array");
  if (!it->is_array()) return Error::Malformed("field '" + name + "': expected an array, got " + Shown(*it));
  return &*it;
}

// The few fields of a readings answer that the controller uses (time_s, the length of gpus,
// server.power_w and server.source), read without building the rest: an 8-GPU agent's answer is
// about 1 KB, and parsing all of it into a document for each of 1,000 servers every period was
// most of the controller's CPU time (36 us against 14 us per answer here). `doc` has the shape of
// the answer, with only those fields (gpus' elements as nulls), for the checks of the full one.
class ReadingsFields : public nlohmann::json_sax<json> {
 public:
  json doc;
  bool top_seen = false;

  bool null() override { return Scalar(nullptr); }
  bool boolean(bool value) override { return Scalar(value); }
  bool number_integer(number_integer_t value) override { return Scalar(value); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(value); }
  bool number_float(number_float_t value, const string_t&) override { return Scalar(value); }
  bool string(string_t& value) override { return Scalar(std::move(value)); }
  bool binary(binary_t&) override { return Scalar(nullptr); }
  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& name) override {
    if (depth_ == 1) key1_ = std::move(name);
    if (depth_ == 2) key2_ = std::move(name);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool KeptAtTop() const { return key1_ == "time_s" || key1_ == "gpus" || key1_ == "server"; }
  bool KeptInServer() const { return in_server_ && (key2_ == "power_w" || key2_ == "source"); }

  bool Scalar(json value) {
    if (depth_ == 0) {
      top_seen = true;
      doc = std::move(value);
    } else if (depth_ == 1 && top_object_ && KeptAtTop()) {
      doc[key1_] = std::move(value);
    } else if (depth_ == 2 && KeptInServer()) {
      doc["server"][key2_] = std::move(value);
    } else if (depth_ == 2 && in_gpus_) {
      doc["gpus"].push_back(nullptr);
    }
    return true;
  }
  bool Open(bool object) {
    json empty = object ? json::object() : json::array();
    if (depth_ == 0) {
      top_seen = true;
      top_object_ = object;
      doc = std::move(empty);
    } else if (depth_ == 1 && top_object_ && KeptAtTop()) {
      in_server_ = object && key1_ == "server";
      in_gpus_ = !object && key1_ == "gpus";
      doc[key1_] = std::move(empty);
    } else if (depth_ == 2 && KeptInServer()) {
      doc["server"][key2_] = std::move(empty);
    } else if (depth_ == 2 && in_gpus_) {
      doc["gpus"].push_back(nullptr);
    }
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    if (depth_ == 1) {
      in_server_ = false;
      in_gpus_ = false;
    }
    return true;
  }

  int depth_ = 0;
  bool top_object_ = false;
  bool in_server_ = false;  // inside the top level's "server" object
  bool in_gpus_ = false;    // inside the top level's "gpus" array
  std::string key1_;
  std::string key2_;
};

Result<json> ParseReadings(const std::string& body) {
  ReadingsFields fields;
  if (!json::sax_parse(body, &fields) || !fields.top_seen) {
    return Error::Malformed("the answer is not JSON: '" + PrintableText(body, 120) + "'");
  }
  if (!fields.doc.is_object()) {
    return Error::Malformed("the answer is not a JSON object: '" + PrintableText(body, 120) + "'");
  }
  return std::move(fields.doc);
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
  http::HttpEndpoint endpoint;
  endpoint.base_url = server.agent_url;
  endpoint.bearer_token = token;
  endpoint.connect_timeout_s = timeouts.connect_timeout_s;
  endpoint.timeout_s = timeouts.request_timeout_s;
  endpoint.max_response_bytes = kMaxAnswerBytes;
  auto client = http::HttpClient::Create(std::move(endpoint));
  if (!client.ok()) return client.error().WithContext(where);
  return std::unique_ptr<RowAgentClient>(new RowAgentClient(server, std::move(*client)));
}

std::string RowAgentClient::Where(std::string_view method, std::string_view path) const {
  return "server " + server_.name + " (" + server_.agent_url + "): " + std::string(method) + " " + std::string(path) +
         ": ";
}

Result<http::HttpResponse> RowAgentClient::Call(std::string_view method, std::string_view path, std::string_view body) {
  auto answer = client_->Request(method, path, body);
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
  auto answer = Call("GET", "/v1/agent");
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
  auto probe = client_->Request("PUT", "/v1/ceilings", R"({"mhz":0,"lease_s":1,"reason":"scope-check"})");
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

Result<ServerPowerSample> RowAgentClient::ReadPower() {
  const auto start = std::chrono::steady_clock::now();
  auto answer = Call("GET", "/v1/readings");
  if (!answer.ok()) return answer.error();
  ServerPowerSample sample;
  sample.request_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto named = [&](const Error& error) { return error.WithContext(Where("GET", "/v1/readings")); };
  auto doc = ParseReadings(answer->body);
  if (!doc.ok()) return named(doc.error());
  auto server = doc->find("server");
  if (server == doc->end() || !server->is_object()) {
    return named(Error::Malformed(server == doc->end() ? std::string("field 'server' is missing; expected an object")
                                                       : "field 'server': expected an object, got " + Shown(*server)));
  }
  auto power_w = NumberField(*server, "power_w", "server.power_w", 0);
  if (!power_w.ok()) return named(power_w.error());
  auto source = StringField(*server, "source", "server.source");
  if (!source.ok()) return named(source.error());
  auto time_s = NumberField(*doc, "time_s", "time_s", 0);
  if (!time_s.ok()) return named(time_s.error());
  auto gpus = ArrayField(*doc, "gpus");
  if (!gpus.ok()) return named(gpus.error());
  sample.power_w = *power_w;
  sample.source = std::move(*source);
  sample.agent_time_s = *time_s;
  sample.gpu_count = static_cast<int>((*gpus)->size());
  return sample;
}

Status RowAgentClient::SetCeilings(int mhz, int lease_s, const std::string& reason) {
  json body = {{"mhz", mhz}, {"lease_s", lease_s}, {"reason", reason}};
  auto answer = Call("PUT", "/v1/ceilings", body.dump());
  if (!answer.ok()) return answer.error();
  return Status::Ok();
}

Status RowAgentClient::ClearCeilings() {
  auto answer = Call("DELETE", "/v1/ceilings");
  if (!answer.ok()) return answer.error();
  return Status::Ok();
}

Result<AgentCeilings> RowAgentClient::ReadCeilings() {
  auto answer = Call("GET", "/v1/state");
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
    if (!gpu.is_object()) return named(Error::Malformed("field '" + at + "': expected an object, got " + Shown(gpu)));
    // The agent names a GPU "gpu" in its state (docs/agent.md's table says "index", as in readings).
    const std::string index_name = gpu.contains("gpu") || !gpu.contains("index") ? "gpu" : "index";
    auto index = IntField(gpu, index_name, at + "." + index_name, 0);
    if (!index.ok()) return named(index.error());
    auto ceiling = gpu.find("ceiling");
    if (ceiling == gpu.end()) {
      return named(Error::Malformed("field '" + at + ".ceiling' is missing; expected an object or null"));
    }
    if (ceiling->is_null()) continue;
    if (!ceiling->is_object()) {
      return named(Error::Malformed("field '" + at + ".ceiling': expected an object or null, got " + Shown(*ceiling)));
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

namespace {

// One call's results. Shared with the pool's jobs: a job still running after the call returned
// (an answer that missed the deadline) writes here, and nobody reads it.
template <typename R>
struct Batch {
  std::vector<size_t> servers;  // item -> server
  std::function<R(size_t)> work;
  RowAgents::Clock::time_point deadline;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable done;
  std::vector<std::optional<R>> results;
  size_t remaining = 0;
};

}  // namespace

Result<std::unique_ptr<RowAgents>> RowAgents::Create(const std::vector<RowServer>& servers, const std::string& token,
                                                     const AgentTimeouts& timeouts, size_t threads) {
  std::unique_ptr<RowAgents> agents(new RowAgents());
  for (const RowServer& server : servers) {
    auto client = RowAgentClient::Create(server, token, timeouts);
    if (!client.ok()) return client.error();
    agents->clients_.push_back(std::move(*client));
  }
  agents->busy_ = std::make_unique<std::atomic<bool>[]>(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) agents->busy_[i] = false;
  if (threads == 0) threads = std::min(servers.size(), kDefaultMaxThreads);
  threads = std::max<size_t>(threads, 1);
  Status started = agents->pool_.Start(threads);
  if (!started.ok()) return started.error().WithContext("the row controller's agent threads: ");
  return agents;
}

RowAgents::~RowAgents() { pool_.shutdown(); }

template <typename R>
std::vector<R> RowAgents::RunAll(std::vector<size_t> servers, std::function<R(size_t)> work,
                                 Clock::time_point deadline) {
  auto batch = std::make_shared<Batch<R>>();
  const size_t count = servers.size();
  batch->servers = std::move(servers);
  batch->work = std::move(work);
  batch->deadline = deadline;
  batch->results.resize(count);
  batch->remaining = count;
  std::atomic<bool>* busy = busy_.get();
  const size_t jobs = std::min(count, pool_.num_threads());
  for (size_t j = 0; j < jobs; ++j) {
    pool_.enqueue([batch, busy, this] {
      for (size_t item = batch->next++; item < batch->servers.size(); item = batch->next++) {
        const size_t index = batch->servers[item];
        std::optional<R> result;
        if (Clock::now() >= batch->deadline) {
          result.emplace(Error::DeadlineExceeded("server " + this->server(index).name + " (" +
                                                 this->server(index).agent_url +
                                                 "): not asked: the period's deadline passed first"));
        } else if (busy[index].exchange(true)) {
          result.emplace(Error::Unavailable("server " + this->server(index).name + " (" +
                                            this->server(index).agent_url +
                                            "): its previous request is still waiting for an answer"));
        } else {
          result.emplace(batch->work(item));
          busy[index] = false;
        }
        std::lock_guard<std::mutex> lock(batch->mu);
        batch->results[item] = std::move(result);
        if (--batch->remaining == 0) batch->done.notify_all();
      }
    });
  }
  std::vector<R> results;
  results.reserve(count);
  std::unique_lock<std::mutex> lock(batch->mu);
  batch->done.wait_until(lock, deadline, [&] { return batch->remaining == 0; });
  for (size_t item = 0; item < count; ++item) {
    if (batch->results[item]) {
      results.push_back(std::move(*batch->results[item]));
    } else {
      const RowServer& named = server(batch->servers[item]);
      results.push_back(Error::DeadlineExceeded("server " + named.name + " (" + named.agent_url +
                                                "): no answer by the period's "
                                                "deadline"));
    }
  }
  return results;
}

Result<std::vector<AgentIdentity>> RowAgents::CheckAll(Clock::time_point deadline) {
  std::vector<size_t> servers(size());
  for (size_t i = 0; i < servers.size(); ++i) servers[i] = i;
  std::vector<Result<AgentIdentity>> checked = RunAll<Result<AgentIdentity>>(
      servers, [this](size_t i) { return clients_[i]->Check(); }, deadline);
  std::vector<AgentIdentity> identities;
  std::string failures;
  size_t failed = 0;
  ErrorCode code = ErrorCode::kUnavailable;
  for (Result<AgentIdentity>& one : checked) {
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
  std::vector<size_t> servers(size());
  for (size_t i = 0; i < servers.size(); ++i) servers[i] = i;
  return RunAll<Result<ServerPowerSample>>(
      std::move(servers), [this](size_t i) { return clients_[i]->ReadPower(); }, deadline);
}

std::vector<Result<AgentCeilings>> RowAgents::ReadAllCeilings(Clock::time_point deadline) {
  std::vector<size_t> servers(size());
  for (size_t i = 0; i < servers.size(); ++i) servers[i] = i;
  return RunAll<Result<AgentCeilings>>(
      std::move(servers), [this](size_t i) { return clients_[i]->ReadCeilings(); }, deadline);
}

std::vector<Status> RowAgents::SendAll(const std::vector<AgentCommand>& commands, Clock::time_point deadline) {
  std::vector<Status> statuses(commands.size());
  // Each server's commands, in the order given.
  std::map<size_t, std::vector<size_t>> by_server;
  for (size_t c = 0; c < commands.size(); ++c) {
    if (commands[c].server >= size()) {
      statuses[c] = Error{"command " + std::to_string(c) + " names server " + std::to_string(commands[c].server) +
                          " of a row of " + std::to_string(size())};
      continue;
    }
    by_server[commands[c].server].push_back(c);
  }
  std::vector<size_t> servers;
  std::vector<std::vector<AgentCommand>> groups;
  std::vector<std::vector<size_t>> positions;
  for (auto& [server, indices] : by_server) {
    servers.push_back(server);
    std::vector<AgentCommand> group;
    for (size_t c : indices) group.push_back(commands[c]);
    groups.push_back(std::move(group));
    positions.push_back(indices);
  }
  auto shared_groups = std::make_shared<std::vector<std::vector<AgentCommand>>>(std::move(groups));
  std::vector<Result<std::vector<Status>>> sent = RunAll<Result<std::vector<Status>>>(
      servers,
      [this, shared_groups](size_t item) -> Result<std::vector<Status>> {
        std::vector<Status> done;
        for (const AgentCommand& command : (*shared_groups)[item]) {
          RowAgentClient& agent = *clients_[command.server];
          done.push_back(command.kind == AgentCommand::Kind::kSetCeilings
                             ? agent.SetCeilings(command.mhz, command.lease_s, command.reason)
                             : agent.ClearCeilings());
        }
        return done;
      },
      deadline);
  for (size_t item = 0; item < sent.size(); ++item) {
    for (size_t k = 0; k < positions[item].size(); ++k) {
      statuses[positions[item][k]] = sent[item].ok() ? (*sent[item])[k] : Status(sent[item].error());
    }
  }
  return statuses;
}

}  // namespace wattcut::row_control
