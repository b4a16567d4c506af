#include "wattcut/server/startup_profiles.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <sstream>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/planner.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::server {

std::string StartupProfile::source() const { return "startup:" + file_name; }

namespace {

// The file's whole text, with the CSV reader's bounds and messages.
Result<std::string> ReadFileText(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, expected a CSV file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::IOError(path + ": cannot open file for reading");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kCsvMaxFileBytes) {
    return Error{path + ": file is " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(kCsvMaxFileBytes) + " this reader accepts"};
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error::IOError(path + ": read error");
  return buffer.str();
}

}  // namespace

Result<StartupProfile> ReadStartupProfile(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text) return text.error();
  auto read = ParseProfileCsvWithWarnings(*text, path);
  if (!read) return read.error();
  StartupProfile out;
  out.path = path;
  out.file_name = std::filesystem::path(path).filename().string();
  out.csv = std::move(*text);
  out.profile = std::make_shared<const Profile>(std::move(read->profile));
  out.warnings = std::move(read->dropped);
  return out;
}

Result<std::vector<StartupProfile>> ReadStartupProfiles(const std::vector<std::string>& paths) {
  std::vector<StartupProfile> out;
  std::map<int, std::string> path_of_stages;
  for (const std::string& path : paths) {
    auto profile = ReadStartupProfile(path);
    if (!profile) return profile.error();
    const int stages = profile->num_stages();
    auto [it, inserted] = path_of_stages.emplace(stages, path);
    if (!inserted) {
      return Error{"profiles " + PrintableText(it->second) + " and " + PrintableText(path) + " both have " +
                   std::to_string(stages) + " stages; give one profile per stage count (jobs with pp_degree " +
                   std::to_string(stages) + " get it)"};
    }
    out.push_back(std::move(*profile));
  }
  return out;
}

Status ComputeStartupFrontier(StartupProfile& profile, const PlannerSettings& planner) {
  const std::string where = PrintableText(profile.path) + ": ";
  if (!profile.profile) return Error{where + "no profile was read"};
  if (planner.num_microbatches < 1) {
    return Error{where + "its frontier needs num_microbatches (--microbatches)"};
  }
  if (auto s = CheckPipelineShape(profile.num_stages() * planner.virtual_stages, planner.num_microbatches); !s) {
    return Error{where + s.error().message};
  }
  const auto start = std::chrono::steady_clock::now();
  Result<Frontier> frontier = [&]() -> Result<Frontier> {
    try {
      // With every point's peak 1-s power, as the frontier worker computes a job's (power targets).
      return ComputeFrontierWithPeakPowersFromDeviceProfile(*profile.profile, planner.ToPlannerOptions());
    } catch (const std::bad_alloc&) {
      return Error{"the planner ran out of memory"};
    } catch (const std::exception& e) {
      return Error{std::string("the planner failed: ") + e.what()};
    }
  }();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!frontier) return frontier.error().WithContext(where + "its frontier cannot be computed: ");
  if (frontier->points().empty()) return Error{where + "the planner returned an empty frontier"};
  profile.planner = planner;
  profile.frontier = std::make_shared<const Frontier>(std::move(*frontier));
  profile.frontier_text = FrontierFileText(*profile.frontier);
  profile.compute_seconds = seconds;
  return Status::Ok();
}

std::shared_ptr<const StartupProfile> MatchStartupProfile(const StartupProfiles& profiles, int pp_degree,
                                                          const PlannerSettings& planner) {
  for (const auto& profile : profiles) {
    if (profile && profile->frontier && profile->num_stages() == pp_degree && profile->planner == planner) {
      return profile;
    }
  }
  return nullptr;
}

}  // namespace wattcut::server
