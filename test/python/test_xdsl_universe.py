"""adir as an xDSL plugin (adir/universe.py): its `xdsl.universe` entry point gives xDSL's own
`xdsl-opt` adir's dialects, passes and C target, with no name clash, and `adir-opt` offers
every pass `xdsl-opt` lists. The lit test test/filecheck/xdsl-opt/plugin.mlir runs both
drivers on a small model; here, the examples and the registries."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.transforms import get_all_passes
from xdsl.universe import Universe
from xdsl.xdsl_opt_main import xDSLOptMain

from adir.passes import ADIR_PASSES
from adir.tools.adir_opt import AdirOptMain
from adir.universe import ADIR_UNIVERSE

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
# The pipeline: adir's passes with xDSL's canonicalize and cse between them.
PIPELINE = (
    "infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1},canonicalize,cse,bufferize,plan-memory"
)


def test_the_entry_point_names_adir_s_universe() -> None:
    (entry,) = [e for e in entry_points(group="xdsl.universe") if e.name == "adir"]
    assert entry.value == "adir.universe:ADIR_UNIVERSE"
    assert entry.load() is ADIR_UNIVERSE


def test_the_universe_holds_only_what_is_adir_s() -> None:
    # The multiverse refuses a name defined twice: adir's must not be xDSL's.
    assert set(ADIR_UNIVERSE.all_dialects) == {"adir", "adir_kernel"}
    assert not set(ADIR_UNIVERSE.all_dialects) & set(get_all_dialects())
    assert set(ADIR_UNIVERSE.all_passes) == set(ADIR_PASSES)
    assert len(ADIR_PASSES) == 22  # the README's rows of adir's own passes
    assert not set(ADIR_PASSES) & set(get_all_passes())
    assert set(ADIR_UNIVERSE.all_targets) == {"c"}
    multiverse = Universe.get_multiverse()  # raises on a clash
    assert set(ADIR_PASSES) | set(get_all_passes()) <= set(multiverse.all_passes)
    assert multiverse.all_dialects["adir"]().name == "adir"
    assert multiverse.all_targets["c"]().name == "c"


def registered_passes(driver_class: type[xDSLOptMain]) -> set[str]:
    """The passes a driver offers, as its __init__ registers them before reading argv."""
    driver = driver_class.__new__(driver_class)
    driver.available_passes, driver.ctx = {}, Context()
    driver.register_all_passes()
    return set(driver.available_passes)


def test_adir_opt_offers_every_pass_xdsl_opt_lists() -> None:
    xdsl_opt = registered_passes(xDSLOptMain)
    assert len(xdsl_opt) == 133 + 22  # xDSL 0.74.0's and adir's, no other plugin here
    assert registered_passes(AdirOptMain) == xdsl_opt


def run(tool: str, *args: str) -> str:
    done = subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_xdsl_opt_runs_the_training_pipeline_as_adir_opt_does() -> None:
    model = "examples/mnist_mlp.mlir"
    planned = run("xdsl-opt", "-p", PIPELINE, model)
    # The two weight matrices, 32x784 and 10x32 floats, stay in RAM: 4 * 25,408 bytes.
    assert "adir.persistent_size = 101632 : i64" in planned
    assert planned == run("adir-opt", "-p", PIPELINE, model)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.stem)
def test_xdsl_opt_plans_every_example(example: Path, tmp_path: Path) -> None:
    """xDSL's driver, in this process (as `xdsl-opt` runs it), gives every example the plan
    adir-opt gives it."""
    output = tmp_path / "planned.mlir"
    xDSLOptMain(args=[str(example), "-p", PIPELINE, "-o", str(output)]).run()
    planned = output.read_text()
    assert "adir.arena_size = " in planned
    assert planned == run("adir-opt", "-p", PIPELINE, str(example))
