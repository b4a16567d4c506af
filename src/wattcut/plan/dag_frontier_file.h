// A generic DAG's whole frontier, every point's knobs included, in one compact text file: the
// format `wattcut.dag_frontier/v1` (docs/frontier_format.md), which `wattcut frontier --dag`
// writes as DIR/frontier.wattcut (the name a pipeline's frontier file has; the format line
// tells them apart). It is DagFrontier's own form:
//
//   wattcut.dag_frontier/v1
//   unit_time_s U
//   devices N
//   device NAME BLOCKING_POWER_W                      N lines
//   operations K
//   operation NAME DEVICE DURATION_UNITS:KNOB ...     K lines, the DAG file's order;
//                                                     DEVICE: index of its device, -1 for none
//   start ... end                                     the points (plan/frontier_text.h)
//
// Names are written with every byte that is a space, a control character, DEL or '%' as %XX
// (hex), so that a name is one token. A file reads back into a DagFrontier with the same
// points, knobs and names; reading checks every count, range and order the frontier relies on
// (options sorted by duration, names unique and at most kMaxDagNameBytes, the end marker a
// truncated file lacks) and names the line and field that is wrong.
#pragma once

#include <string>
#include <string_view>

#include "wattcut/base/result.h"
#include "wattcut/plan/dag_frontier.h"

namespace wattcut {

inline constexpr std::string_view kDagFrontierFormat = "wattcut.dag_frontier/v1";

std::string DagFrontierFileText(const DagFrontier& frontier);
// Reads DagFrontierFileText's output back; `source` names the text in errors.
Result<DagFrontier> ParseDagFrontierFile(std::string_view text, const std::string& source);
// Reads `path`: a `wattcut frontier --dag` output folder (its frontier.wattcut) or the file;
// a pipeline's frontier file is refused with a message that says so.
Result<DagFrontier> ReadDagFrontierFile(const std::string& path);

// Which kind of frontier `path` (a folder or file, as above) holds, from its format line.
enum class FrontierFileKind { kPipeline, kDag };
Result<FrontierFileKind> ReadFrontierFileKind(const std::string& path);

}  // namespace wattcut
