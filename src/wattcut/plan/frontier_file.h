// A whole frontier, every plan on it included, in one compact text file
// (frontier.wattcut): the format `wattcut.frontier/v1`, documented in
// docs/frontier_format.md. It is the frontier's own compact form (the first point's
// durations plus, per later point, the computations whose duration changed), so a file
// reads back into a Frontier that plans exactly like the one written: same points, same
// plan at every point. The planning server stores its frontiers in this format.
//
// Reading checks everything a Frontier relies on (counts, ranges, the options sorted, the
// end marker that a truncated file lacks) and names the line and field that is wrong;
// the planner's limits (plan/planning_limits.h) bound what a file may make it allocate.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/frontier_text.h"

namespace wattcut {

inline constexpr std::string_view kFrontierFormat = "wattcut.frontier/v1";
// v2: v1 plus a chunk per computation and the split backward kinds (the interleaved and
// zero-bubble schedules); written only for frontiers that need it, so v1 readers refuse
// exactly those, at the format line.
inline constexpr std::string_view kFrontierFormatV2 = "wattcut.frontier/v2";

// The frontier as `wattcut.frontier/v1` text.
std::string FrontierFileText(const Frontier& frontier);
// Reads FrontierFileText's output back; `source` names the text in errors ("FILE:LINE: ...").
Result<Frontier> ParseFrontierFile(std::string_view text, const std::string& source);

// The file `wattcut frontier` writes into its output folder (a generic DAG's frontier has the
// same name: plan/dag_frontier_file.h).
inline constexpr std::string_view kFrontierFileName = frontier_text::kFileName;
// The largest frontier file read (kMaxFrontierPoints points of GPT-3-sized plans fit).
inline constexpr uint64_t kMaxFrontierFileBytes = frontier_text::kMaxFileBytes;
// Reads a frontier from `path`: a `wattcut frontier` output folder (its frontier.wattcut)
// or the file itself. Errors name the path: missing, not readable, too large, a DAG's
// frontier, or the line and field ParseFrontierFile refuses.
Result<Frontier> ReadFrontierFile(const std::string& path);

}  // namespace wattcut
