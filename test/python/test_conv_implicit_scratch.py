"""The scratch select-kernels asks for on the hosts is what the implicit-GEMM convolutions need.

`select_kernels/tuned.py`'s `implicit_floats` mirrors `adir_conv_implicit_floats` in
`runtime/tuned/adir_tuned_conv_implicit.c`: the C kernel takes its implicit path only when the
scratch holds that count, so a Python count one float short would silently keep the im2col
panels (slow, but right), and one too large would waste arena. The C function is compiled and
called on the convolutions of the examples and on strided, dilated and grouped ones.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from c_testing import WARNINGS, c_compilers

from adir.backends.c.files import runtime_files
from adir.output_files import write_directory
from adir.passes.select_kernels.tuned import implicit_floats

KINDS = {"conv2d": 0, "conv2d_grad_input": 1, "conv2d_grad_weight": 2}
# (channels, height, width, outputs, out_h, out_w, kh, kw, stride, pad, dilation, groups)
SHAPES = [
    (3, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1, 1),  # ResNet-8's first conv
    (16, 32, 32, 32, 16, 16, 3, 3, 2, 1, 1, 1),  # its stride-2 3x3
    (16, 32, 32, 32, 16, 16, 1, 1, 2, 0, 1, 1),  # its stride-2 1x1 shortcut
    (64, 8, 8, 64, 8, 8, 3, 3, 1, 1, 1, 1),  # its last 3x3
    (1, 49, 10, 64, 25, 5, 10, 4, 2, 5, 1, 1),  # DS-CNN's first conv (padding 5 x 1 below)
    (8, 5, 5, 12, 5, 5, 1, 1, 1, 0, 1, 1),  # pointwise
    (4, 11, 11, 6, 11, 11, 3, 3, 1, 1, 1, 2),  # groups
    (3, 8, 10, 4, 4, 6, 3, 3, 1, 2, 2, 1),  # dilation
    (3, 16, 27, 17, 6, 9, 2, 5, 3, 2, 1, 1),  # stride 3, even kernel
    (2, 9, 9, 4, 15, 15, 3, 3, 1, 4, 1, 1),  # padding past (k - 1) d
    (3, 9, 8, 5, 4, 4, 2, 1, 3, 1, 1, 1),  # stride 3, a 2x1 kernel: a phase no tap lands on
    (4, 7, 6, 8, 3, 2, 3, 3, 2, 1, 2, 1),  # stride 2, dilation 2: one phase a side has taps
    (2, 9, 13, 10, 4, 4, 3, 5, 2, 1, 2, 1),  # column planes, dilation 2
    (3, 2, 3, 9, 6, 3, 1, 5, 1, 2, 1, 1),  # column planes at stride 1
]


def python_count(kernel: str, shape: tuple[int, ...]) -> int:
    channels, height, width, outputs, out_h, out_w, kh, kw, stride, pad, dilation, groups = shape
    pads = [pad, pad, 1 if kh == 10 else pad, 1 if kh == 10 else pad]
    count = implicit_floats(
        kernel,
        (1, channels, height, width),
        (1, outputs, out_h, out_w),
        (outputs, channels // groups, kh, kw),
        [stride, stride],
        pads,
        [dilation, dilation],
        groups,
    )
    return -1 if count is None else count


def c_program(shapes: list[tuple[int, ...]]) -> str:
    lines = []
    for shape in shapes:
        channels, height, width, outputs, out_h, out_w, kh, kw, stride, pad, dilation, groups = (
            shape
        )
        left = 1 if kh == 10 else pad
        for kind in KINDS.values():
            lines.append(
                f'    printf("%d\\n", (int)adir_conv_implicit_floats({kind}, {channels}, '
                f"{height}, {width}, {outputs}, {out_h}, {out_w}, {kh}, {kw}, {stride}, "
                f"{stride}, {pad}, {left}, {dilation}, {dilation}, {groups}));"
            )
    body = "\n".join(lines)
    head = '#include <stdio.h>\n#include "adir_tuned.h"\n\nint main(void)\n{\n'
    return f"{head}{body}\n    return 0;\n}}\n"


@pytest.mark.parametrize("compiler", c_compilers())
def test_python_count_is_the_c_kernels(tmp_path: Path, compiler: str) -> None:
    files = runtime_files()
    files["counts.c"] = c_program(SHAPES)
    write_directory(str(tmp_path), files)
    executable = tmp_path / "counts"
    completed = subprocess.run(
        [compiler, *WARNINGS, "-O1", f"-I{tmp_path}", str(tmp_path / "counts.c"),
         str(tmp_path / "adir_tuned_conv_implicit.c"), "-o", str(executable), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    printed = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
    expected = [python_count(kernel, shape) for shape in SHAPES for kernel in KINDS]
    assert [int(line) for line in printed.stdout.split()] == expected


def test_resnet8_last_conv_counts() -> None:
    """By hand for ResNet-8's last 3x3 (64 channels, 8 x 8, padding 1): planes of 10 x 10 per
    channel, a slack of 10 + 64 floats, 576 taps; the forward pass adds W^T (576 x 64), the
    weight gradient dy^T (64 pixels x 64), the input gradient (dy padded alike) W'^T."""
    planes = 64 * 10 * 10 + 10 + 64
    shape = SHAPES[3]
    assert python_count("conv2d", shape) == planes + 576 + 576 * 64
    assert python_count("conv2d_grad_weight", shape) == planes + 576 + 64 * 64
    assert python_count("conv2d_grad_input", shape) == planes + 576 + 64 * 576


def test_strided_input_gradient_counts() -> None:
    """By hand for the input gradients read phase by phase. ResNet-8's stride-2 3x3 (dx 32 x 32,
    padding 1, dy 16 x 16 of 32 channels): the even phase's pixels 2h' - 1 for h' = 1 .. 16
    (taps 0 and 2, dy rows h' and h' - 1), the odd one's 2h' + 1 - 1 for h' = 0 .. 15 (tap 1,
    dy row h'): dy with one row and column of zeros before it and none after, 17 x 17 per
    channel; 288 taps, the sub-kernels' 288 x 16 weights."""
    assert python_count("conv2d_grad_input", SHAPES[1]) == 32 * 17 * 17 + 17 + 64 + 288 + 16 * 288
    # The 1x1 shortcut has none: its panel path multiplies dy in place (W^T dy), then scatters.
    assert python_count("conv2d_grad_input", SHAPES[2]) == -1
    # Padding 4 on a 3 x 3 kernel at stride 1 (dx 9 x 9 from dy 15 x 15): dx pixel h reads dy
    # rows h + 4 - i, i = 2, 1, 0: rows 2 .. 12, the plane starts at dy's row 2 (lead -2).
    assert python_count("conv2d_grad_input", SHAPES[9]) == 4 * 11 * 11 + 11 + 64 + 36 + 2 * 36
