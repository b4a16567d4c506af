#include "wattcut/dag/dag_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace wattcut {
namespace {

constexpr const char* kChain = R"({"format": "wattcut.dag/v1", "unit_time_s": 1,
  "devices": [{"name": "gpu0", "blocking_power_w": 70.5}, {"name": "gpu1"}],
  "operations": [
    {"name": "A", "device": "gpu0", "options": [{"time": 2, "energy": 10, "knob": 1410}, {"time": 1, "energy": 14, "knob": 1980}]},
    {"name": "B", "options": [{"time": 3, "energy": 6, "knob": -7}, {"time": 2, "energy": 9, "knob": 8}]}],
  "edges": [["A", "B"]]})";

// The error message of parsing `text` as "dag.json" (empty when it parses).
std::string ErrorOf(const std::string& text) {
  Result<GenericDag> dag = ParseDag(text, "dag.json");
  return dag.ok() ? std::string() : dag.error().message;
}

// kChain with `from` replaced by `to` (once).
std::string Edited(const std::string& from, const std::string& to) {
  std::string text = kChain;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(DagFile, ReadsOperationsOptionsDevicesAndEdges) {
  Result<GenericDag> dag = ParseDag(kChain, "dag.json");
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  EXPECT_EQ(dag->unit_time_s, 1.0);
  ASSERT_EQ(dag->devices.size(), 2u);
  EXPECT_EQ(dag->devices[0].name, "gpu0");
  EXPECT_EQ(dag->devices[0].blocking_power_w, 70.5);
  EXPECT_EQ(dag->devices[1].blocking_power_w, 0);
  ASSERT_EQ(dag->operations.size(), 2u);
  EXPECT_EQ(dag->operations[0].name, "A");
  EXPECT_EQ(dag->operations[0].device, 0);
  EXPECT_EQ(dag->operations[1].device, -1);
  ASSERT_EQ(dag->operations[1].options.size(), 2u);
  EXPECT_EQ(dag->operations[1].options[0].time_s, 3);
  EXPECT_EQ(dag->operations[1].options[0].energy_j, 6);
  EXPECT_EQ(dag->operations[1].options[0].knob, -7);
  EXPECT_EQ(dag->edges, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(DagFile, TextRoundTripsExactly) {
  GenericDag dag;
  dag.unit_time_s = 1e-4;
  dag.devices = {{"d0", 70.4}, {"d1", 0.1 + 0.2}};
  dag.operations = {{"forward d0 c0 m0", 0, {{0.0123, 3.2, 1410}, {1.0 / 3, 2.0 / 3, 1980}}},
                    {"x \"quoted\"", -1, {{5e-324 + 1e-300, 0, 0}}},
                    {"forward d1 c0 m0", 1, {{0.1, 7, 210}}}};
  dag.edges = {{0, 2}, {1, 2}};
  const std::string text = DagText(dag);
  Result<GenericDag> back = ParseDag(text, "x");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  EXPECT_EQ(back->unit_time_s, dag.unit_time_s);
  ASSERT_EQ(back->devices.size(), 2u);
  EXPECT_EQ(back->devices[1].blocking_power_w, 0.1 + 0.2);
  ASSERT_EQ(back->operations.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->operations[i].name, dag.operations[i].name);
    EXPECT_EQ(back->operations[i].device, dag.operations[i].device);
    ASSERT_EQ(back->operations[i].options.size(), dag.operations[i].options.size());
    for (size_t k = 0; k < dag.operations[i].options.size(); ++k) {
      EXPECT_EQ(back->operations[i].options[k].time_s, dag.operations[i].options[k].time_s);
      EXPECT_EQ(back->operations[i].options[k].energy_j, dag.operations[i].options[k].energy_j);
      EXPECT_EQ(back->operations[i].options[k].knob, dag.operations[i].options[k].knob);
    }
  }
  EXPECT_EQ(back->edges, dag.edges);
  EXPECT_EQ(DagText(*back), text);
}

TEST(DagFile, TextOfANameThatIsNotUtf8IsWrittenNotThrown) {
  GenericDag dag;
  dag.operations = {{"bad \xff name", -1, {{1, 1, 1}}}};
  const std::string text = DagText(dag);
  Result<GenericDag> back = ParseDag(text, "x");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->operations[0].name, "bad \xef\xbf\xbd name");
}

TEST(DagFile, OptionalFieldsMayBeLeftOut) {
  Result<GenericDag> dag =
      ParseDag(R"({"format": "wattcut.dag/v1", "operations": [{"name": "only", "options": [{"time": 1, "energy": 0,
               "knob": 1}]}]})",
               "d");
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  EXPECT_FALSE(dag->unit_time_s.has_value());
  EXPECT_TRUE(dag->devices.empty());
  EXPECT_TRUE(dag->edges.empty());
}

TEST(DagFile, BadValuesAreRefusedWithFileAndPath) {
  EXPECT_EQ(ErrorOf(Edited("\"time\": 2, \"energy\": 9", "\"time\": -1, \"energy\": 9")),
            "dag.json: operations[1].options[1].time: expected a positive finite number of seconds, got -1");
  EXPECT_EQ(ErrorOf(Edited("\"time\": 3", "\"time\": \"3\"")),
            "dag.json: operations[1].options[0].time: expected a positive finite number of seconds, got \"3\"");
  EXPECT_EQ(ErrorOf(Edited("\"energy\": 10", "\"energy\": -0.5")),
            "dag.json: operations[0].options[0].energy: expected a non-negative finite number of joules, got -0.5");
  EXPECT_EQ(ErrorOf(Edited("\"knob\": 8", "\"knob\": 8.5")),
            "dag.json: operations[1].options[1].knob: expected an integer in [-2^31, 2^31 - 1] (a frequency in MHz, "
            "for example), got 8.5");
  EXPECT_NE(ErrorOf(Edited("\"knob\": 8", "\"knob\": 2147483648")).find("operations[1].options[1].knob"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(Edited("\"knob\": 8", "\"knob\": -7")),
            "dag.json: operations[1].options[1].knob: knob -7 repeated (also operations[1].options[0]'s)");
  EXPECT_EQ(ErrorOf(Edited("\"blocking_power_w\": 70.5", "\"blocking_power_w\": -1")),
            "dag.json: devices[0].blocking_power_w: expected a non-negative finite number of watts, got -1");
  EXPECT_EQ(ErrorOf(Edited("\"unit_time_s\": 1", "\"unit_time_s\": 0")),
            "dag.json: unit_time_s: expected a positive finite number of seconds, got 0");
  EXPECT_EQ(ErrorOf(Edited("\"device\": \"gpu0\"", "\"device\": \"gpu9\"")),
            "dag.json: operations[0].device: unknown device 'gpu9' (not in devices)");
  EXPECT_EQ(ErrorOf(Edited("wattcut.dag/v1", "wattcut.dag/v2")),
            "dag.json: format: expected \"wattcut.dag/v1\", got \"wattcut.dag/v2\"");
  EXPECT_EQ(ErrorOf("[1, 2]"), "dag.json: expected a JSON object {\"format\": \"wattcut.dag/v1\", ...}, got [1,2]");
}

TEST(DagFile, StructuralErrorsNameWhatIsWrong) {
  EXPECT_EQ(ErrorOf(Edited("[\"A\", \"B\"]", "[\"A\", \"B\"], [\"B\", \"F9.9\"]")),
            "dag.json: edges[1][1]: unknown operation 'F9.9'");
  EXPECT_EQ(ErrorOf(Edited("{\"name\": \"B\"", "{\"name\": \"A\"")),
            "dag.json: operations[1].name: operation 'A' is also operations[0]'s name");
  EXPECT_EQ(ErrorOf(Edited("{\"name\": \"gpu1\"}", "{\"name\": \"gpu0\"}")),
            "dag.json: devices[1].name: device 'gpu0' is also devices[0]'s name");
  EXPECT_EQ(ErrorOf(Edited("[\"A\", \"B\"]", "[\"A\", \"B\"], [\"B\", \"A\"]")),
            "dag.json: edges: the edges make a cycle: 'A' -> 'B' -> 'A'");
  EXPECT_EQ(ErrorOf(Edited("[\"A\", \"B\"]", "[\"A\", \"A\"]")), "dag.json: edges: the edges make a cycle: 'A' -> 'A'");
  EXPECT_EQ(ErrorOf(R"({"format": "wattcut.dag/v1", "operations": []})"),
            "dag.json: operations: expected a non-empty array of operations {name, device, options}, got []");
  EXPECT_EQ(ErrorOf(R"({"format": "wattcut.dag/v1"})"), "dag.json: missing field operations");
  EXPECT_EQ(ErrorOf(R"({"format": "wattcut.dag/v1", "operations": [{"name": "x", "options": []}]})"),
            "dag.json: operations[0].options: expected a non-empty array of options {time, energy, knob}, got []");
  EXPECT_EQ(ErrorOf(R"({"format": "wattcut.dag/v1", "operations": [{"name": "x"}]})"),
            "dag.json: operations[0]: missing field options");
  EXPECT_EQ(ErrorOf(Edited("\"edges\"", "\"edge\"")),
            "dag.json: edge: unknown field (expected one of format, unit_time_s, devices, operations, edges)");
  EXPECT_EQ(ErrorOf(Edited("\"knob\": 1410", "\"knob\": 1410, \"freq\": 3")),
            "dag.json: operations[0].options[0].freq: unknown field (expected one of time, energy, knob)");
  EXPECT_EQ(ErrorOf(Edited("[\"A\", \"B\"]", "[\"A\"]")),
            "dag.json: edges[0]: expected an edge [from, to] (operation names), got [\"A\"]");
  EXPECT_EQ(ErrorOf(Edited("{\"name\": \"B\"", "{\"name\": \"\"")),
            "dag.json: operations[1].name: expected a name of 1 to 256 bytes, got \"\"");
}

TEST(DagFile, AFieldTwiceInAnObjectIsRefused) {
  // nlohmann would keep the last "time" without a word: the plan would use a time the user
  // may not have meant.
  EXPECT_EQ(ErrorOf(Edited("\"time\": 2, \"energy\": 9", "\"time\": 2, \"time\": 5, \"energy\": 9")),
            "dag.json: operations[1].options[1].time: the field appears twice in its object");
  EXPECT_EQ(ErrorOf(Edited("\"unit_time_s\": 1,", "\"unit_time_s\": 1, \"unit_time_s\": 2,")),
            "dag.json: unit_time_s: the field appears twice in its object");
  EXPECT_EQ(ErrorOf(Edited("{\"name\": \"gpu1\"}", "{\"name\": \"gpu1\", \"name\": \"gpu2\"}")),
            "dag.json: devices[1].name: the field appears twice in its object");
  // The same key in different objects is fine.
  EXPECT_EQ(ErrorOf(kChain), "");
}

TEST(DagFile, ALongCycleIsNamedShortly) {
  std::string text = R"({"format": "wattcut.dag/v1", "operations": [)";
  std::string edges;
  for (int i = 0; i < 20; ++i) {
    text += std::string(i ? "," : "") + R"({"name": "op)" + std::to_string(i) +
            R"(", "options": [{"time": 1, "energy": 1, "knob": 1}]})";
    edges +=
        std::string(i ? "," : "") + "[\"op" + std::to_string(i) + "\", \"op" + std::to_string((i + 1) % 20) + "\"]";
  }
  // op20 hangs off the cycle and is not on it.
  text += R"(,{"name": "op20", "options": [{"time": 1, "energy": 1, "knob": 1}]}], "edges": [)" + edges +
          R"(, ["op3", "op20"]]})";
  const std::string error = ErrorOf(text);
  EXPECT_NE(error.find("dag.json: edges: the edges make a cycle: 'op"), std::string::npos) << error;
  EXPECT_NE(error.find("... (20 operations)"), std::string::npos) << error;
  EXPECT_EQ(error.find("op20"), std::string::npos) << error;
}

TEST(DagFile, InvalidJsonNamesLineAndColumn) {
  const std::string error = ErrorOf("{\"format\": \"wattcut.dag/v1\",\n \"operations\": [}");
  EXPECT_EQ(error.rfind("dag.json: line 2, column 17: not valid JSON", 0), 0u) << error;
  EXPECT_EQ(ErrorOf("").rfind("dag.json: line 1, column 1: not valid JSON", 0), 0u) << ErrorOf("");
  // A number beyond a double's range was nlohmann's bare exception text, with no file, line or field.
  EXPECT_EQ(ErrorOf("{\"format\": \"wattcut.dag/v1\",\n \"unit_time_s\": 1e400}"),
            "dag.json: line 2, column 21: not valid JSON in unit_time_s ([json.exception.out_of_range.406] number "
            "overflow parsing '1e400')");
}

TEST(DagFile, AnEdgeGivenTwiceIsRefused) {
  const std::string ops = R"({"format": "wattcut.dag/v1", "operations": [)"
                          R"({"name": "a", "options": [{"time": 1, "energy": 1, "knob": 1}]},)"
                          R"({"name": "b", "options": [{"time": 1, "energy": 1, "knob": 1}]}], )";
  EXPECT_EQ(ErrorOf(ops + R"("edges": [["a", "b"], ["a", "b"]]})"),
            "dag.json: edges[1]: the same edge as edges[0] (each edge once)");
}

// Past 2^20 operations the file is refused when the element past the bound starts, before the
// rest is read or a document built (it once took 4 minutes and 884 MB).
TEST(DagFile, MoreOperationsThanTheBoundAreRefusedBeforeTheRestIsRead) {
  std::string text = R"({"format": "wattcut.dag/v1", "operations": [)";
  for (int64_t i = 0; i <= kMaxDagOperations; ++i) text += "0,";
  text += "garbage that is never read";
  EXPECT_EQ(ErrorOf(text),
            "dag.json: operations: at most 1048576 operations, got more (refused before the rest was read)");
}

TEST(DagFile, DeeplyNestedJsonIsRefusedNotACrash) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string error = ErrorOf(R"({"format": "wattcut.dag/v1", "operations": [)" + deep + "]}");
  EXPECT_EQ(error.rfind("dag.json: arrays and objects nested deeper than 128 levels (at operations[0][0][0]", 0), 0u)
      << error.substr(0, 200);
  EXPECT_LT(error.size(), 200u);
}

TEST(DagFile, ReadsAFileAndSaysWhenItIsMissing) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "dag_file_test.json";
  { std::ofstream(path) << kChain; }
  Result<GenericDag> dag = ReadDagFile(path.string());
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  EXPECT_EQ(dag->operations.size(), 2u);
  std::filesystem::remove(path);
  Result<GenericDag> missing = ReadDagFile(path.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, path.string() + ": cannot open the DAG file");
}

}  // namespace
}  // namespace wattcut
