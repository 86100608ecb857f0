"""The wheel as a user gets it: built from the checkout, installed in a fresh venv and run from
another directory, it compiles a model to C with the README's commands (`## Using it`), the C
builds, xDSL's `xdsl-opt` runs adir's passes through the plugin, `pip show` names the license,
and `adir-import` without torch says which extra to install.

pip resolves xdsl and numpy as `tools/setup.sh` does (the machine's pip configuration). Slow:
the venv and the install take most of a minute."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from c_testing import WARNINGS

from adir import __version__

ROOT = Path(__file__).parents[2]
PIPELINE = (
    "infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1},canonicalize,cse,bufferize,plan-memory"
)

pytestmark = pytest.mark.slow


def run(*command: str | Path, cwd: Path, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == expect, f"{command}: {done.stdout}{done.stderr}"
    return done


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no torch) with the wheel of this checkout installed."""
    work = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    # Built from a copy of what the wheel is made of: setuptools leaves a build/ directory in
    # the tree it builds, which would otherwise be the checkout's.
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "adir", source / "adir", ignore=shutil.ignore_patterns("__pycache__"))
    run(*pip, "wheel", "--no-deps", "-q", "-w", work / "dist", source, cwd=work)
    (wheel,) = (work / "dist").glob("adir-*.whl")
    assert wheel.name == f"adir-{__version__}-py3-none-any.whl"
    run(sys.executable, "-m", "venv", work / "venv", cwd=work)
    bin_dir = work / "venv" / "bin"
    # A pip that shows PEP 639's License-Expression (Python 3.11's own pip 23.2 does not).
    run(bin_dir / "python", "-m", "pip", "install", "-q", "pip>=25.1", cwd=work)
    run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, cwd=work)
    return bin_dir


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """Somewhere outside the checkout, with a model in it (the README's `model.mlir`)."""
    shutil.copy(ROOT / "examples" / "mnist_mlp.mlir", tmp_path / "model.mlir")
    return tmp_path


def test_pip_show_lists_the_license(venv_bin: Path, user_dir: Path) -> None:
    shown = run(venv_bin / "pip", "show", "-f", "adir", cwd=user_dir).stdout
    assert "License-Expression: Apache-2.0 WITH LLVM-exception" in shown
    assert f"adir-{__version__}.dist-info/licenses/LICENSE" in shown
    assert "adir/py.typed" in shown


def test_the_readme_s_c_commands_compile_the_model(venv_bin: Path, user_dir: Path) -> None:
    adir_opt = venv_bin / "adir-opt"
    # adir-opt --optimizer=sgd --plan-memory -t c model.mlir
    source = run(
        adir_opt, "--optimizer=sgd", "--plan-memory", "-t", "c", "model.mlir", cwd=user_dir
    )
    assert "float train_step(const float *x, const int32_t *label)" in source.stdout
    # adir-opt --predict --optimizer=adam --emit-c=out/ --c-prefix=net_ --c-main model.mlir
    run(
        adir_opt,
        "--predict",
        "--optimizer=adam",
        "--emit-c=out/",
        "--c-prefix=net_",
        "--c-main",
        "model.mlir",
        cwd=user_dir,
    )
    sources = sorted(path.name for path in (user_dir / "out").glob("*.c"))
    assert {"net_model.c", "net_main.c"} <= set(sources)
    # The runtime's kernels came from the wheel: the program builds as tools/demo.sh builds it.
    run("cc", *WARNINGS, "-O2", *sources, "-o", "train", "-lm", cwd=user_dir / "out")
    assert (user_dir / "out" / "train").is_file()


def test_xdsl_opt_runs_adir_s_passes(venv_bin: Path, user_dir: Path) -> None:
    planned = run(venv_bin / "xdsl-opt", "-p", PIPELINE, "model.mlir", cwd=user_dir).stdout
    assert "adir.persistent_size = 101632 : i64" in planned  # the two weights' 25,408 floats
    mixed = run(
        venv_bin / "adir-opt", "-p", "infer-shapes,autodiff,licm", "model.mlir", cwd=user_dir
    )
    assert "func.func @loss_grad(" in mixed.stdout


def test_adir_import_without_torch_names_the_extra(venv_bin: Path, user_dir: Path) -> None:
    (user_dir / "net.py").write_text("def make_model():\n    raise AssertionError\n")
    done = run(
        venv_bin / "adir-import",
        "net.py:make_model",
        "--input-shape",
        "1,4",
        cwd=user_dir,
        expect=1,
    )
    assert done.stderr == (
        "adir-import: error: the PyTorch importer needs torch, which is not installed here: "
        "pip install 'adir[torch]'\n"
    )
