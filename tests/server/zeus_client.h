// A client of the Zeus pipeline-frequency-optimizer server, written from Zeus's JSON
// shapes alone (zeus/optimizer/pipeline_frequency/common.py: JobInfo, RankInfo,
// FrequencySchedule, ProfilingResult) and its four routes. It knows nothing of
// wattcut: if wattcut serves it, a Zeus client works against wattcut unchanged.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zeus_shapes {

struct JobInfo {
  int pp_degree;
  int dp_degree;
  int tp_degree;
  int world_size;
  std::optional<std::string> job_metadata;
};

struct RankInfo {
  int rank;
  int dp_rank;
  int pp_rank;
  int tp_rank;
  std::vector<int> available_frequencies;
};

struct FrequencySchedule {
  int rank = 0;
  std::vector<std::pair<std::string, int>> frequencies;
};

struct ProfilingResult {
  int rank;
  std::vector<double> iter_time;
  std::vector<double> iter_energy;
  // instruction -> iterations -> computations
  std::vector<std::pair<std::string, std::vector<std::vector<double>>>> time_breakdown;
  std::vector<std::pair<std::string, std::vector<std::vector<double>>>> energy_breakdown;
};

// One HTTP client per rank, as in Zeus's PipelineFrequencyOptimizer.
class Client {
 public:
  Client(const std::string& host, int port);
  // POST /register_job -> the job id (a JSON string). nullopt on any failure.
  std::optional<std::string> RegisterJob(const JobInfo& info);
  bool RegisterRank(const std::string& job_id, const RankInfo& info);
  // GET /schedule/{job_id}?rank=N (blocks until every rank asked).
  std::optional<FrequencySchedule> GetSchedule(const std::string& job_id, int rank);
  bool ReportResult(const std::string& job_id, const ProfilingResult& result);
  const std::string& last_error() const { return last_error_; }

 private:
  httplib::Client http_;
  std::string last_error_;
};

}  // namespace zeus_shapes
