#include "wattcut/cli/output_directory.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

namespace wattcut::cli {
namespace fs = std::filesystem;

Result<OutputDirectory> OutputDirectory::Create(const fs::path& final_dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    if (!fs::is_directory(final_dir, ec)) {
      return Error{final_dir.string() + ": exists and is not a directory"};
    }
    if (!fs::is_empty(final_dir, ec) && !overwrite) {
      return Error{final_dir.string() + ": directory exists and is not empty (pass --overwrite to replace it)"};
    }
  }
  fs::path parent = fs::absolute(final_dir, ec).parent_path();
  fs::create_directories(parent, ec);
  if (ec) return Error{parent.string() + ": cannot create directory: " + ec.message()};
  fs::path staging = parent / ("." + final_dir.filename().string() + ".partial-" + std::to_string(getpid()));
  fs::remove_all(staging, ec);
  if (!fs::create_directory(staging, ec) || ec) {
    return Error{staging.string() + ": cannot create directory: " + ec.message()};
  }
  return OutputDirectory(fs::absolute(final_dir), staging);
}

OutputDirectory::OutputDirectory(OutputDirectory&& other) noexcept
    : final_(std::move(other.final_)), staging_(std::move(other.staging_)), committed_(other.committed_) {
  other.committed_ = true;  // the moved-from object owns nothing
}

OutputDirectory::~OutputDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

Status OutputDirectory::Write(const std::string& relative, const std::string& contents) {
  fs::path path = staging_ / relative;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Error{path.parent_path().string() + ": cannot create directory: " + ec.message()};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return Error{path.string() + ": write failed"};
  return Status::Ok();
}

Status OutputDirectory::Commit() {
  std::error_code ec;
  fs::path old;
  if (fs::exists(final_, ec)) {
    old = final_.parent_path() / ("." + final_.filename().string() + ".old-" + std::to_string(getpid()));
    fs::rename(final_, old, ec);
    if (ec) return Error{final_.string() + ": cannot move the previous output aside: " + ec.message()};
  }
  fs::rename(staging_, final_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, final_, ec);
    return Error{final_.string() + ": cannot move the new output into place: " + ec.message()};
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace wattcut::cli
