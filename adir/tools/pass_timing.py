"""`adir-opt --time-passes`: the wall time of every stage of a run, as a table on stderr.

xDSL's own `--time-passes` prints to stdout (into the IR) and counts the verifier with the pass
before it. Here parsing, each pass, the verifier and the output (the IR printer or the C
backend) are separate rows, in the order they ran, like MLIR's `-mlir-timing`, with the
process's CPU time beside the wall time (on a busy machine the CPU time is the steadier figure):

    ===-------------------------------------------------------------------------===
                             adir-opt execution time report
    ===-------------------------------------------------------------------------===
      Total: 1.234 s wall, 1.180 s CPU
       wall s      %    CPU s   runs   stage
        0.210   17.0    0.200      1   parse
        0.105    8.5    0.101      2   verify
        ...
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

RULE = "===" + "-" * 73 + "==="


class StageTimer:
    """Wall and CPU seconds per named stage, in the order the stages first ran (a stage that
    runs again, e.g. the verifier, adds up under its name and counts its runs)."""

    def __init__(self) -> None:
        self.seconds: dict[str, tuple[float, float]] = {}  # stage -> (wall, CPU)
        self.runs: dict[str, int] = {}
        self.started = self.now()

    @staticmethod
    def now() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.start()
        try:
            yield
        finally:
            self.stop(name)

    def start(self) -> None:
        self.started = self.now()

    def stop(self, name: str) -> None:
        """Count the time since `start` to `name`."""
        (wall, cpu), (wall0, cpu0) = self.now(), self.started
        old_wall, old_cpu = self.seconds.get(name, (0.0, 0.0))
        self.seconds[name] = (old_wall + wall - wall0, old_cpu + cpu - cpu0)
        self.runs[name] = self.runs.get(name, 0) + 1

    def report(self, stream: IO[str] | None = None) -> None:
        stream = sys.stderr if stream is None else stream
        wall = sum(w for w, _ in self.seconds.values())
        cpu = sum(c for _, c in self.seconds.values())
        lines = [RULE, f"{'adir-opt execution time report':^79}".rstrip(), RULE]
        lines.append(f"  Total: {wall:.3f} s wall, {cpu:.3f} s CPU")
        lines.append(f"  {'wall s':>7} {'%':>6} {'CPU s':>8} {'runs':>6}   stage")
        for name, (stage_wall, stage_cpu) in self.seconds.items():
            share = 100 * stage_wall / wall if wall else 0.0
            runs = self.runs[name]
            lines.append(f"  {stage_wall:7.3f} {share:6.1f} {stage_cpu:8.3f} {runs:6d}   {name}")
        print("\n".join(lines), file=stream)
