"""wattcut: energy-optimal GPU frequency plans for pipeline-parallel training (Perseus).

The training-side API. `PipelineFrequencyOptimizer` is a drop-in replacement for Zeus's
`zeus.optimizer.pipeline_frequency.PipelineFrequencyOptimizer` that talks to `wattcut serve`.
Hook points for Megatron-LM and DeepSpeed: docs/python.md. `Frontier.load(DIR)` reads the plans of
a `wattcut frontier --out DIR` run and looks them up as the CLI and the server do.
"""

from wattcut._version import __version__
from wattcut.frontier import DagPlan, Frontier, Plan
from wattcut.pipeline_frequency import PipelineFrequencyOptimizer, WattcutError, node_agent

__all__ = ["DagPlan", "Frontier", "Plan", "PipelineFrequencyOptimizer", "WattcutError", "__version__", "node_agent"]
