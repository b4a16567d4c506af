"""POLCA live, end to end: a row of 12 `wattcut agent` processes on loopback, each on its own fake
NVML (8 GPUs), and `wattcut polca control` over them (live_row.py). The test is the row's load: it
moves every server's GPU load (the fake NVML's `load` key) so that the row's power crosses T1, T2
and the brake and comes back, and then breaks things: the controller is SIGKILLed and restarted,
one agent is SIGKILLed and restarted.

What must hold (issue 13): shadow mode changes no clock; the commands in the decision log are
exactly what RowPowerPolicy emits for the logged readings (replayed here, in Python, from the same
rule and thresholds, and through the C++ policy by `wattcut polca audit`); low priority is capped
before high priority; everything is released after the release thresholds; a killed controller's ceilings
stay until their lease and a restarted one resumes from the agents' state; a killed agent's
readings are stale and never release, and its server is handled again when it is back.
"""

from __future__ import annotations

import os
import sys
import unittest
from typing import Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from live_row import PERIOD_S, SERVERS, LiveRowBase, priority  # noqa: E402

THRESHOLDS = {"t1": 0.80, "t1_release": 0.75, "t2": 0.89, "t2_release": 0.84, "brake": 1.00, "brake_release": 0.89}


class LiveRow(LiveRowBase):
    POLICY = "polca"

    @classmethod
    def run_the_day(cls) -> None:
        # Shadow first, at a load that would brake: nothing may change.
        cls.shadow_log = os.path.join(cls.dir.path, "shadow.jsonl")
        cls.lock_calls_before_shadow = sum(s.lock_calls() for s in cls.states)
        shadow = cls.start_controller("shadow", cls.shadow_log)
        cls.load(1.0, 6 * PERIOD_S)
        shadow.stop()
        cls.shadow_output = shadow.output
        cls.lock_calls_after_shadow = sum(s.lock_calls() for s in cls.states)

        # The load is back to normal before the enforcing controller starts: had it started at the
        # shadow phase's full load, its first reading could be T2 (seen twice: low and high
        # priority capped within one period, as the policy does from T2).
        cls.load(0.3, 2 * PERIOD_S)
        cls.controller = cls.start_controller("enforce", cls.log)
        cls.load(0.3, 4 * PERIOD_S)    # ~64 %: normal
        cls.load(0.64, 8 * PERIOD_S)   # ~85 %: T1, low priority capped
        cls.snapshot("t1")
        cls.load(1.0, 10 * PERIOD_S)   # T2: low further down, then high priority
        cls.snapshot("t2")
        cls.load(0.3, 8 * PERIOD_S)    # below every release threshold
        cls.snapshot("released")
        cls.load(1.0, 6 * PERIOD_S)    # from normal straight to 108 %: the brake
        cls.load(0.3, 10 * PERIOD_S)
        cls.snapshot("after_brake")

        # The controller dies in T2 (reached through T1, as above, not through the brake's on and off):
        # its ceilings stay until their lease (4 s); a restarted one resumes from them.
        cls.load(0.64, 8 * PERIOD_S)
        cls.load(1.0, 10 * PERIOD_S)
        cls.restart_controller("restarted.jsonl")
        cls.load(1.0, 4 * PERIOD_S)
        cls.snapshot("controller_restarted")

        # One agent dies while the row is capped; the load drops: its stale readings never release.
        cls.agents[1].kill()
        cls.load(0.3, 8 * PERIOD_S)
        cls.snapshot("agent_down")
        cls.agents[1] = cls.start_agent(1, cls.ports[1])
        cls.load(0.3, 10 * PERIOD_S)
        cls.snapshot("agent_back")
        cls.controller.stop()

    def test_shadow_mode_changes_no_clock(self):
        self.assertEqual(self.lock_calls_after_shadow, self.lock_calls_before_shadow)
        decisions = self.read_log(self.shadow_log)
        self.assertTrue(any(d["brake"] for d in decisions), "it would have braked")
        self.assertTrue(all("would_send" in d and "sent" not in d for d in decisions))
        # Its last words say so (issue 54: it said the ceilings stay at the agents, though it sent none).
        self.assertIn("shadow mode sent nothing, so nothing is left at the agents", self.shadow_output)
        self.assertNotIn("until their lease runs out", self.shadow_output)

    def test_the_commands_are_the_policys_for_the_logged_readings(self):
        # The policy's rule, replayed: level and brake after each reading (in-band: no latency).
        for path in (self.log, self.log_after_restart):
            decisions = self.read_log(path)
            self.assertGreater(len(decisions), 10)
            level, brake = None, None
            for d in decisions:
                if level is None:  # the first decision of a run starts from its resumed state
                    level, brake = d["state"], d["brake"]
                    continue
                p, fresh = d["fraction"], not d["stale_servers"]
                expected_brake = brake
                if not brake and p > THRESHOLDS["brake"]:
                    expected_brake = True
                elif brake and fresh and p < THRESHOLDS["brake_release"]:
                    expected_brake = False
                self.assertEqual(d["brake"], expected_brake, d)
                order = ["normal", "t1", "t2-low", "t2-high"]
                nxt = level
                if p > THRESHOLDS["t2"]:
                    if order.index(level) < 2:
                        nxt = "t2-low"
                    elif level == "t2-low":
                        nxt = "t2-high"
                elif p > THRESHOLDS["t1"] and order.index(level) < 1:
                    nxt = "t1"
                if fresh:
                    if order.index(level) >= 2 and p < THRESHOLDS["t2_release"]:
                        nxt = "normal" if p < THRESHOLDS["t1_release"] else "t1"
                    elif level == "t1" and p < THRESHOLDS["t1_release"]:
                        nxt = "normal"
                self.assertEqual(d["state"], nxt, d)
                if nxt != level or expected_brake != brake:
                    self.assertTrue(d["commands"], f"a change without a command: {d}")
                level, brake = nxt, expected_brake

    def test_the_decision_logs_replay_through_the_cpp_policy(self):
        for path in (self.log, self.log_after_restart):
            self.assert_audited(path)

    def test_every_threshold_was_crossed(self):
        decisions = self.read_log(self.log)
        states = {d["state"] for d in decisions}
        self.assertTrue({"normal", "t1", "t2-low", "t2-high"} <= states, states)
        self.assertTrue(any(d["brake"] for d in decisions))

    def test_low_priority_is_capped_before_high_priority(self):
        t1 = self.snapshots["t1"]
        for i in range(SERVERS):
            if priority(i) == "low":
                self.assertEqual(set(t1[i]), {1275}, i)
            else:
                self.assertEqual(set(t1[i]), {0}, f"high priority s{i} is not capped at T1")
        t2 = self.snapshots["t2"]
        for i in range(SERVERS):
            self.assertEqual(set(t2[i]), {1110 if priority(i) == "low" else 1305}, i)
        # In the log: each high-priority server's first ceiling comes after every low one's first.
        first_sent: Dict[str, float] = {}
        for d in self.read_log(self.log):
            for s in d["sent"]:
                if s["mhz"] is not None:
                    first_sent.setdefault(s["server"], d["time"])
        low = [first_sent[f"s{i:02d}"] for i in range(SERVERS) if priority(i) == "low"]
        high = [first_sent[f"s{i:02d}"] for i in range(SERVERS) if priority(i) == "high"]
        self.assertLess(max(low), min(high))

    def test_everything_is_released_below_the_release_thresholds(self):
        for name in ("released", "after_brake", "agent_back"):
            self.assertEqual({m for server in self.snapshots[name] for m in server}, {0}, name)

    def test_a_killed_controllers_ceilings_stay_and_a_restarted_one_resumes(self):
        killed = self.snapshots["controller_killed"]
        self.assertTrue(all(m > 0 for server in killed for m in server), killed)
        self.assertIn("resumed in state polca level=t2", self.restart_output_head)
        first = self.read_log(self.log_after_restart)[0]
        self.assertTrue(first["state"].startswith("t2"), first)
        self.assertEqual(self.snapshots["controller_restarted"], killed)

    def test_a_dead_agent_is_stale_never_releases_and_is_handled_again_when_back(self):
        decisions = self.read_log(self.log_after_restart)
        stale = [d for d in decisions if "s01" in d["stale_servers"]]
        self.assertTrue(stale, "s01's readings were never stale")
        for d in stale:
            self.assertTrue(d["state"].startswith("t2") or d["brake"], f"released on a stale reading: {d}")
            self.assertIn("cannot reach", d["stale_reasons"]["s01"], f"a stale reading says why: {d}")
        down = self.snapshots["agent_down"]
        self.assertTrue(all(m > 0 for i, server in enumerate(down) if i != 1 for m in server), down)
        self.assertEqual(decisions[-1]["state"], "normal")
        self.assertEqual(decisions[-1]["stale_servers"], [])


if __name__ == "__main__":
    unittest.main()
