"""`--train=suggested` with quantized training (`--quantize-frozen`, `--quantize-level=2`):
`suggest-update-scheme{quantize_level=...}` compiles each candidate as the int8 step it becomes,
so the int8 weights, int32 biases and int8 activations count at their sizes
(docs/quantized_training.md, "--train=suggested at level 2").

The model is DS-CNN as docs/quantized_training.md imports it (`adir-import ... --eval`: batch
norms on running statistics, as a frozen pretrained backbone runs), batch 1, SGD at lr 0.01,
the host's kernels.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adir.context import parse_module
from adir.passes.suggest_update_scheme import SuggestUpdateSchemePass
from adir.update_scheme_suggestion import measure

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FLOAT = SuggestUpdateSchemePass().pipeline()
LEVEL_2 = SuggestUpdateSchemePass(quantize_level=2).pipeline()
# DS-CNN's int8 parameters: conv1 64x1x10x4, four depthwise 64x3x3, four pointwise 64x64, the
# classifier 12x64: 22,016 int8 weights; nine convs' 64 int32 biases and the classifier's 12.
WEIGHTS, BIASES = 2560 + 4 * 576 + 4 * 4096 + 768, 9 * 64 + 12
# What the level-2 suggestion for 256 KB trains: every conv and the classifier, whole, in
# 24,368 bytes (1 per weight, 4 per bias; in float these 22,604 values would be 90,416), and an
# arena of 153,088 (the backward pass's f32 gradients and the saved int8 activations).
DS_CNN_256K = (
    "bias@last:18+all@fc,features.30,features.27,features.23,features.20,features.16,"
    "features.13,features.9,features.6,features.1"
)


@pytest.fixture(scope="module")
def ds_cnn_eval(tmp_path_factory) -> Path:
    """DS-CNN imported as the docs' command imports it."""
    path = tmp_path_factory.mktemp("ds_cnn") / "ds_cnn_eval.mlir"
    imported = subprocess.run(
        [
            str(BIN / "adir-import"),
            f"{ROOT / 'examples' / 'torch' / 'ds_cnn.py'}:model",
            "--eval",
            "--input-shape",
            "1,1,49,10",
            "--label-shape",
            "1",
            "--loss",
            "cross_entropy",
            "-o",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    return path


def test_level_2_quantizes_before_autodiff_and_lowers_after_the_optimizer() -> None:
    """The candidates compile as `--quantize-frozen --quantize-level=2` does (adir-opt's
    SHORTCUT_ORDER), level 1 after insert-optimizer; calibration and qas pass through."""
    assert LEVEL_2 == (
        "freeze-batchnorm,quantize-frozen-prefix{level=2},autodiff,"
        "insert-optimizer{kind=sgd lr=0.01},fuse-expand-depthwise,in-place-depthwise,"
        "fuse-quantize-conv,fuse-weight-updates,reorder-updates,fuse-batchnorm-relu,bufferize,"
        "select-kernels{kernels=tuned target=host},plan-memory"
    )
    level_1 = SuggestUpdateSchemePass(quantize_level=1, calibration='x "1".npy').pipeline()
    quantize = 'quantize-frozen-prefix{calibration="x \\"1\\".npy"}'
    assert f"insert-optimizer{{kind=sgd lr=0.01}},{quantize}" in level_1
    no_qas = SuggestUpdateSchemePass(quantize_level=2, qas=False).pipeline()
    assert "quantize-frozen-prefix{level=2 qas=false},autodiff" in no_qas
    recompute = SuggestUpdateSchemePass(recompute=True).pipeline()  # adir-opt's place for it
    assert "fuse-weight-updates,recompute-activations,reorder-updates" in recompute


def test_a_level_2_layer_counts_one_byte_a_weight_and_a_value_an_element(ds_cnn_eval) -> None:
    """The classifier (12x64 weights, 12 biases: 780 values) takes 3,120 bytes in float and
    768 + 4 x 12 = 816 at level 2; both count 780 trained values (bytes / 4 would give 204)."""
    module = parse_module(ds_cnn_eval.read_text(), str(ds_cnn_eval))
    in_float = measure(module, "all@fc", "infer-shapes," + FLOAT)
    int8 = measure(module, "all@fc", "infer-shapes," + LEVEL_2)
    assert (in_float.trainable, in_float.values) == (3120, 780)
    assert (int8.trainable, int8.values) == (816, 780)
    assert int8.sram == 16816  # docs' level-2 row: arena 16,000 + 816


def adir_opt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "adir-opt"), *args], capture_output=True, text=True)


def planned_memory(path: Path, *flags: str, tmp_path: Path) -> tuple[dict, str]:
    plan = tmp_path / "plan.json"
    result = adir_opt(
        str(path),
        "--optimizer=sgd",
        "--lr=0.01",
        "--plan-memory",
        f"--memory-json={plan}",
        *flags,
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert result.returncode == 0, result.stderr
    return json.loads(plan.read_text()), result.stderr


@pytest.mark.slow
def test_ds_cnn_at_level_2_trains_every_layer_within_256k(ds_cnn_eval, tmp_path) -> None:
    """`--train=suggested --sram=256K --quantize-frozen --quantize-level=2`: DS_CNN_256K,
    177,456 bytes of SRAM (arena 153,088 + 24,368); pasting the printed scheme with the same
    flags plans the same memory."""
    int8 = ["--quantize-frozen", "--quantize-level=2"]
    plan, stderr = planned_memory(
        ds_cnn_eval, "--train=suggested", "--sram=256K", *int8, tmp_path=tmp_path
    )
    scheme = re.search(r"suggest-update-scheme: --train=(\S+)", stderr)
    assert scheme is not None and scheme.group(1) == DS_CNN_256K
    assert "SRAM 177,456 bytes of sram=262,144 (arena 153,088, trainable parameters 24,368" in (
        stderr
    )
    assert plan["ram"]["total"] == 177456
    assert plan["ram"]["trainable parameters"] == WEIGHTS + 4 * BIASES
    pasted, _ = planned_memory(ds_cnn_eval, f"--train={DS_CNN_256K}", *int8, tmp_path=tmp_path)
    assert pasted["ram"] == plan["ram"] and pasted["flash"] == plan["flash"]


@pytest.mark.slow
def test_the_documented_table_s_level_2_row_is_under_tte_s_141_kb() -> None:
    """tools/tte_memory_table.py's int8 level-2 row for MobileNetV2-w0.35: the scheme the
    suggester picks for 141 KB at level 2 fits it (SRAM <= 144,384 bytes)."""
    spec = importlib.util.spec_from_file_location(
        "tte_memory_table", ROOT / "tools" / "tte_memory_table.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    lines = tool.table(tool.MODEL, ["int8-2"], "141K", "1536K")
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert cells[0] == "int8 level 2, suggested for 141K" and cells[-1] == "141 KB"
    assert int(cells[3].replace(",", "")) <= 141 * 1024
