#include "wattcut/telemetry/prometheus_matrix.h"

#include <gtest/gtest.h>

#include <cmath>

#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

std::string MatrixErrorOf(const std::string& text) {
  Result<PrometheusMatrix> m = ParsePrometheusMatrix(text, "q.json");
  return m.ok() ? "(parsed)" : m.error().message;
}

std::string Matrix(const std::string& values) {
  return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up"},"values":)" +
         values + "}]}}";
}

TEST(PrometheusMatrix, ReadsARangeQueryAnswer) {
  Result<PrometheusMatrix> m = ReadPrometheusMatrix(kTestdata + "/prometheus/dcgm_power.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->series.size(), 4u);
  EXPECT_EQ(MetricName(m->series[0]), "DCGM_FI_DEV_POWER_USAGE");
  EXPECT_EQ(m->series[0].labels.at("Hostname"), "node-a");
  ASSERT_EQ(m->series[0].points.size(), 4u);
  EXPECT_DOUBLE_EQ(m->series[0].points[0].time_s, 1714564800);
  EXPECT_DOUBLE_EQ(m->series[0].points[0].value, 312.456);
  EXPECT_TRUE(std::isnan(m->series[0].points[2].value));
  Result<PrometheusMatrix> inf = ParsePrometheusMatrix(Matrix(R"([[1.5,"+Inf"],[2.5,"-Inf"]])"), "q.json");
  ASSERT_TRUE(inf.ok());
  EXPECT_TRUE(std::isinf(inf->series[0].points[0].value));
}

TEST(PrometheusMatrix, ErrorAnswersAndInstantQueriesAreNamed) {
  Result<PrometheusMatrix> e = ReadPrometheusMatrix(kTestdata + "/prometheus/query_error.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("Prometheus answered an error (errorType 'bad_data'): invalid parameter"),
            std::string::npos);
  Result<PrometheusMatrix> v = ReadPrometheusMatrix(kTestdata + "/prometheus/instant_vector.json");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("data.resultType is 'vector'"), std::string::npos);
  EXPECT_NE(v.error().message.find("use /api/v1/query_range"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})").find("'scalar'"),
            std::string::npos);
}

TEST(PrometheusMatrix, BadInputNamesTheJsonPath) {
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[1,"2"],[2,85.5]])"))
                .find("q.json: data.result[0].values[1][1]: expected the sample "
                      "value as a string"),
            std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[1,"abc"]])")).find("data.result[0].values[0][1]: expected a number as a string"),
            std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([["1","2"]])")).find("values[0][0]: expected a Unix time"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[-1,"2"]])")).find("values[0][0]: expected a Unix time >= 0"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[2,"2"],[1,"3"]])")).find("values[1][0]: times must increase"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[2,"2"],[2,"3"]])")).find("times must increase"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[1,"1e999"]])")).find("values[0][1]"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[1e999,"1"]])")).find("not JSON"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix(R"([[1]])")).find("values[0]: expected [time, \"value\"]"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(R"({"status":"success","status":"error"})").find("key 'status' appears twice"),
            std::string::npos);
  EXPECT_NE(
      MatrixErrorOf(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1","a":"2"}}]}})")
          .find("data.result[0].metric.a: key 'a' appears twice"),
      std::string::npos);
  EXPECT_NE(MatrixErrorOf("").find("q.json: not JSON"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(Matrix("[[1,\"2\"]").substr(0, 60)).find("not JSON at line 1"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(std::string("\x1f\x8b\x08\0\0", 5)).find("not JSON"), std::string::npos);
  EXPECT_NE(MatrixErrorOf("[1,2]").find("expected a Prometheus API answer"), std::string::npos);
  EXPECT_NE(MatrixErrorOf(R"({"status":"success"})").find("data: expected an object"), std::string::npos);
  EXPECT_NE(
      MatrixErrorOf(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":1},"values":[]}]}})")
          .find("data.result[0].metric.a: expected a label value"),
      std::string::npos);
}

TEST(PrometheusMatrix, ValuesOrLabelsNestedBeyondTheBoundAreRefusedNotACrash) {
  // Before: 100,000 nested '[' as `values` (or in `metric`) ended the reader in SIGSEGV, in
  // nlohmann's recursive dump on the error path.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& text :
       {Matrix(deep), R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":)" + deep +
                          R"(},"values":[]}]}})"}) {
    const std::string error = MatrixErrorOf(text);
    EXPECT_EQ(error.rfind("q.json: arrays and objects nested deeper than 128 levels (at data.result[0].", 0), 0u)
        << error.substr(0, 300);
    EXPECT_LT(error.size(), 300u);
  }
}

// A label longer than any real one is refused where it is read, its name cut in the message
// (before: a 50 MB Hostname made calibrate compare it per load row for minutes, and the error
// printed it whole).
TEST(PrometheusMatrix, ALabelLongerThanTheBoundIsRefused) {
  const std::string huge(5u << 20, 'h');
  const std::string at_bound(1024, 'h');
  auto answer = [](const std::string& name, const std::string& value) {
    return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{")" + name + R"(":")" + value +
           R"("},"values":[[1,"1"]]}]}})";
  };
  EXPECT_EQ(MatrixErrorOf(answer("Hostname", at_bound)), "(parsed)");
  const std::string error = MatrixErrorOf(answer("Hostname", huge));
  EXPECT_EQ(error,
            "q.json: data.result[0].metric.Hostname: a label of 5242880 bytes, more than the 1024 a label name "
            "or value may have here (a host name has at most 253)");
  const std::string long_name = MatrixErrorOf(answer(huge, "x"));
  EXPECT_NE(long_name.find("a label of 5242880 bytes"), std::string::npos);
  EXPECT_LT(long_name.size(), 300u) << "the name is cut";
}

TEST(PrometheusMatrix, WarningsAreKept) {
  Result<PrometheusMatrix> m = ParsePrometheusMatrix(
      R"({"status":"success","warnings":["too many samples"],"data":{"resultType":"matrix","result":[]}})", "q.json");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->warnings.size(), 1u);
  EXPECT_EQ(m->warnings[0], "Prometheus: too many samples");
}

}  // namespace
}  // namespace wattcut::telemetry
