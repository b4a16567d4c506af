// Power series in a Prometheus range-query answer (prometheus_matrix.h), into PowerTelemetry:
//
//  * DCGM_FI_DEV_POWER_USAGE (W), dcgm-exporter's per-GPU power, and the agent's /metrics series
//    of the same name: a GpuPowerSeries per GPU. The GPU is the `gpu` label (the index) or, without
//    it, `UUID` (dcgm-exporter's label names: gpu, UUID, device, modelName, Hostname, plus the
//    scrape's instance and job). Series of one GPU whose other labels differ (dcgm-exporter's pod,
//    namespace and container labels change with the workload) are joined; two values at one time
//    are refused unless equal.
//  * DCGM_FI_DEV_SM_CLOCK (MHz) in the same file fills sm_clock_mhz of the power sample at the same
//    time (a range query evaluates every series at the same steps).
//  * Whole-server power: wattcut_agent_server_power_watts with source="redfish" (the BMC's reading
//    through the agent), ipmi_dcmi_power_consumption_watts (Prometheus' ipmi_exporter, DCMI), and
//    any metric named by `server_power_metric` (a Redfish exporter's): a ServerPowerSeries.
//    wattcut_agent_server_power_watts with source="model" is the agent's estimate from its GPUs,
//    not a measurement: skipped with a note, as are the agent's gpu/non-gpu split series.
//  * The server of a series is its `server_label` label when the option is given (every series
//    must have it), else `Hostname` when the series has it, else `instance`.
//
// Any other metric is refused by name (a wrong query should not read as no power). A NaN or
// infinite sample is skipped and counted in a note; a negative or impossibly large one is an
// error naming its JSON path (data.result[3].values[17][1]).
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/prometheus_matrix.h"

namespace wattcut::telemetry {

struct PrometheusPowerOptions {
  std::string server_label;         // "": Hostname, else instance
  std::string server_power_metric;  // another whole-server power metric (W)
};

Result<PowerTelemetry> PowerFromPrometheus(const PrometheusMatrix& matrix, const PrometheusPowerOptions& options);

}  // namespace wattcut::telemetry
