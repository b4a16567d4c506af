// Writing a command's output directory all at once: files go into a fresh hidden sibling
// directory `.NAME.partial-PID` first, which replaces DIR only when everything was written.
// A failed run leaves no partial DIR behind, and an existing non-empty DIR is never touched
// unless the user asked to overwrite it.
//
// DIR may be written in any form a shell user would: relative or absolute, with a trailing
// slash, with `.` or `..` components, through symbolic links; it is resolved once, at
// Create(), to the absolute directory it names. Create() also checks everything that can
// be checked before the command computes anything (the parent exists or can be created and
// is writable, DIR is not a file, not a mount point to replace, not the root), so a bad
// --out fails at once rather than after the work.
//
// The staging directory is removed on every path out of a run that did not Commit(): the
// destructor (errors), and SIGINT, SIGTERM or SIGHUP (a watcher thread removes it and then
// lets the signal end the process as usual). What cannot be cleaned up (SIGKILL, a crash)
// is cleaned by the next run into the same DIR: Create() removes `.NAME.partial-PID`
// folders whose process no longer exists, and leaves those of live processes alone.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::cli {

// The absolute directory `given` names (see above); fails on an empty path or one that
// resolves to the root directory.
Result<std::filesystem::path> ResolveOutputPath(const std::string& given);

// `given` as the user wrote it, for messages, without trailing slashes ("out/" -> "out"), so
// that "wrote " + DisplayPath(given) + "/frontier.csv" reads as one path; "/" stays "/".
std::string DisplayPath(const std::string& given);

// The staging directory of `final_dir` for process `pid`: DIR_PARENT/.NAME.partial-PID.
std::filesystem::path StagingPathFor(const std::filesystem::path& final_dir, pid_t pid);

class OutputDirectory {
 public:
  // Fails when `final_dir` exists and is not a directory, exists, is not empty and
  // `overwrite` is false, is a mount point that `overwrite` would have to replace, or when
  // the staging directory cannot be created (parent not creatable or not writable).
  static Result<OutputDirectory> Create(const std::string& final_dir, bool overwrite);
  OutputDirectory(OutputDirectory&& other) noexcept;
  OutputDirectory& operator=(OutputDirectory&&) = delete;
  ~OutputDirectory();  // removes the staging directory unless Commit() succeeded

  // The resolved, absolute DIR.
  const std::filesystem::path& final_path() const { return final_; }
  // Writes `relative` (sub-folders created) under the staging directory.
  Status Write(const std::string& relative, const std::string& contents);
  // Path of a file in the staging directory (for writers that need a path).
  std::filesystem::path StagingPath(const std::string& relative) const { return staging_ / relative; }
  // Moves the staging directory into place.
  Status Commit();

 private:
  OutputDirectory(std::filesystem::path final_dir, std::filesystem::path staging)
      : final_(std::move(final_dir)), staging_(std::move(staging)) {}
  std::filesystem::path final_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace wattcut::cli
