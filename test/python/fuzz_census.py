"""Count every failure of the fuzz classes instead of stopping at the first (as the tests do):

    ADIR_FUZZ_EXAMPLES=5000 python test/python/fuzz_census.py [KIND ...]

runs ADIR_FUZZ_EXAMPLES mutated inputs of each KIND (test_fuzz_driver.MUTATIONS: text, names,
huge; all by default) through each of issue 17's three pipelines, compiles the C of every `-t c`
success (one in ADIR_FUZZ_COMPILE_EVERY), and prints the counts by pipeline and outcome, with the
first line of each distinct failure and how often it occurred (ADIR_FUZZ_SAVE=DIR keeps the
failing inputs).
"""

from __future__ import annotations

import collections
import os
import re
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import test_fuzz_driver as fuzz
from hypothesis import HealthCheck, Phase, given, settings

# ADIR_FUZZ_SAVE=DIR keeps every input that fails, as DIR/<kind>-<crc>.mlir.
SAVE_TO = Path(os.environ["ADIR_FUZZ_SAVE"]) if os.environ.get("ADIR_FUZZ_SAVE") else None


def first_error_line(text: str) -> str:
    """The line that names the failure, with paths and numbers blurred so that alike failures
    count together."""
    lines = [line for line in text.splitlines() if "error" in line or "Error" in line]
    line = lines[-1] if lines else (text.strip().splitlines() or ["(no output)"])[-1]
    line = re.sub(r"/tmp/\S+?:\d+:\d+", "FILE", line)
    return re.sub(r"\d+", "N", line)[:160]


def census(kind: str, options: list[str], examples: int) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()

    @settings(
        derandomize=True,
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(source=fuzz.mutated_source(kind))
    def run_one(source: tuple[str, bytes]) -> None:
        _, data = source
        counts["examples"] += 1
        if counts["examples"] % 250 == 0:  # a partial count, for a run that is cut short
            print(f"   ... {kind} {options}: {dict(counts)}", file=sys.stderr, flush=True)
        outcome = fuzz.run_driver(data, options)
        problem = outcome.problem()
        if problem is not None:
            key = f"{problem}: {first_error_line(outcome.output)}"
            counts[key] += 1
            if SAVE_TO is not None:  # the failing inputs, to reproduce them one by one
                SAVE_TO.mkdir(parents=True, exist_ok=True)
                (SAVE_TO / f"{kind}-{zlib.crc32(data):08x}.mlir").write_bytes(data)
            return
        counts[f"exit {outcome.code}"] += 1
        if outcome.code == 0 and "-t" in options and zlib.crc32(data) % fuzz.COMPILE_EVERY == 0:
            counts["C compiled"] += 1
            for failure in fuzz.c_failures(data, options, outcome.stdout):
                counts[f"C does not compile: {first_error_line(failure)}"] += 1

    run_one()
    return counts


def main(kinds: list[str]) -> None:
    for kind in kinds or list(fuzz.MUTATIONS):
        for options in fuzz.DONE_WHEN_PIPELINES:
            start = time.monotonic()
            counts = census(kind, options, fuzz.MAX_EXAMPLES)
            print(f"== {kind} {' '.join(options) or '(plain)'}: {time.monotonic() - start:.0f} s")
            for key, count in sorted(counts.items(), key=lambda kv: -kv[1]):
                print(f"{count:6d}  {key}")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
