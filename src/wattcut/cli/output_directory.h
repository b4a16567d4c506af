// Writing a command's output directory all at once: files go into a fresh sibling
// directory first, which replaces DIR only when everything was written. A failed run
// leaves no partial DIR behind, and an existing non-empty DIR is never touched unless
// the user asked to overwrite it.
#pragma once

#include <filesystem>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::cli {

class OutputDirectory {
 public:
  // Fails when `final_dir` exists, is not empty and `overwrite` is false, or when the
  // staging directory cannot be created.
  static Result<OutputDirectory> Create(const std::filesystem::path& final_dir, bool overwrite);
  OutputDirectory(OutputDirectory&& other) noexcept;
  OutputDirectory& operator=(OutputDirectory&&) = delete;
  ~OutputDirectory();  // removes the staging directory unless Commit() succeeded

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
