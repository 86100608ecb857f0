#!/usr/bin/env python3
"""One training step of adir's generated C against PyTorch eager, torch.compile and JAX jit.

    python tools/bench.py                          every row: ~15 minutes
    python tools/bench.py --quick                  short timings (a smoke test, figures noisy)
    python tools/bench.py --models mlp_s --opts sgd --min-time 2 --json out.json

For each model, batch and optimizer (`ROWS`) it builds the model with adir's `ModelBuilder` (the
MLPerf Tiny models: imports examples/torch/<model>.py as `adir-import` does), runs the compiler
(infer-shapes, autodiff, insert-optimizer, fuse-weight-updates, bufferize, plan-memory, then the C
printer), builds the C twice (`-O3 -march=native` and portable `-O2`; the runtime compiled once a
run for each) around a timing `main` written here, and times the same step, from the same weights
and batch, in PyTorch eager, under torch.compile (inductor) and, if it can be imported, JAX jit (the
imported models through tools/torch_to_jax.py). Every system runs in its own process on one pinned
CPU with one thread. It prints one table: median microseconds per step, adir's time over the best
peer's, the GFLOP/s adir reaches against a single-core numpy float32 GEMM timed in the same run, the
loss of step 10 of every system (checked against the same ten steps in PyTorch float64: within
`--rtol`, or twice PyTorch float32's own distance where a row is that ill-conditioned; so nobody is
fast by being wrong), the arena against the memory planner's lower bound, and the time the compiler
took. `docs/benchmarks.md` has the method and the figures.
"""

from __future__ import annotations

import os

# One BLAS thread: set before anything imports numpy (and inherited by every worker).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import functools  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

MODELS = {
    "mlp_s": "MLP 784-32-10 sigmoid, log_softmax + NLL",
    "mlp_m": "MLP 784-256-128-10 relu, cross-entropy",
    "lenet": "LeNet-5: conv5x5x6 relu pool2, conv5x5x16 relu pool2, fc 256-120-84-10 relu, "
    "cross-entropy",
    "resnet8": "MLPerf Tiny ResNet-8 (examples/torch/resnet8.py): 3x3 convs padding 1, stride 2, "
    "1x1 shortcuts, batchnorm, cross-entropy",
    "ds_cnn": "MLPerf Tiny DS-CNN (examples/torch/ds_cnn.py): conv 10x4 stride 2, depthwise 3x3 + "
    "pointwise 1x1, batchnorm, cross-entropy; its dropouts left out (each system would draw "
    "its own masks)",
    "mobilenet_v1": "MLPerf Tiny MobileNetV1-0.25 (examples/torch/mobilenet_v1.py): 96x96x3, "
    "conv 3x3 stride 2, 13 x [depthwise 3x3 + pointwise 1x1], batchnorm, relu6, cross-entropy",
    "autoencoder": "MLPerf Tiny anomaly-detection autoencoder (examples/torch/autoencoder.py): "
    "640-128x4-8-128x4-640 linear, batchnorm1d, relu; MSE against the input",
}
IMPORTED = {"resnet8", "ds_cnn", "mobilenet_v1", "autoencoder"}
"""The models imported from examples/torch/ (their weights: the file's deterministic init)."""
ROWS = [  # issue 10's table, plus the Adam variants, plus issue 22's MLPerf Tiny rows
    (model, batch, opt)
    for model, batch in (
        ("mlp_s", 1),
        ("mlp_s", 32),
        ("mlp_m", 32),
        ("lenet", 1),
        ("lenet", 16),
        ("resnet8", 1),
        ("resnet8", 16),
        ("ds_cnn", 1),
        ("ds_cnn", 16),
        ("mobilenet_v1", 1),
        ("autoencoder", 8),  # BatchNorm1d trains from batch 2 on (examples/torch/autoencoder.py)
    )
    for opt in ("sgd", "adam")
]
LR = {"sgd": 0.01, "adam": 1e-3}  # Adam: betas 0.9 / 0.999, eps 1e-8 (PyTorch's defaults)
C_BUILDS = {"O3-native": ["-O3", "-march=native"], "O2": ["-O2"]}
CHECK_STEPS = 10  # the loss of this step and the parameter change after it are compared
PREFIX = "bench_"


# --- the models ---------------------------------------------------------------------------


# --- the MLPerf Tiny models, imported from examples/torch/ ----------------------------------


@functools.cache
def torch_source(model: str):  # -> the examples/torch/<model>.py module
    path = Path(__file__).resolve().parents[1] / "examples" / "torch" / f"{model}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{model}", path)
    assert spec is not None and spec.loader is not None
    source = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = source
    spec.loader.exec_module(source)
    return source


def torch_model(model: str):  # -> torch.nn.Module
    """The example's model in training mode, each dropout replaced by an identity: every
    system would draw its own masks, and the loss check needs one computation."""
    from torch import nn

    net = torch_source(model).model()
    for name, module in list(net.named_modules()):
        if isinstance(module, nn.Dropout):
            parent_name, _, child = name.rpartition(".")
            setattr(net.get_submodule(parent_name), child, nn.Identity())
    return net.train()


def imported_params(model: str) -> list[tuple[str, tuple[int, ...]]]:
    """(C symbol, shape) of each trainable parameter of an imported model."""
    from adir.frontends.torch_import import symbol_names

    net = torch_model(model)
    symbols = symbol_names(list(net.state_dict()))
    return [(symbols[name], tuple(p.shape)) for name, p in net.named_parameters()]


def imported_macs(model: str, batch: int) -> list[int]:
    """Multiply-accumulates of each conv and linear layer of one forward pass, in order."""
    import torch
    from torch import nn

    net, macs = torch_model(model).eval(), []  # eval: BatchNorm1d trains on batch >= 2 only

    def count(module, _inputs, output) -> None:
        per_output = math.prod(module.weight.shape[1:])
        macs.append(output.numel() * per_output)

    for module in net.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            module.register_forward_hook(count)
    with torch.no_grad():
        net(torch_source(model).example_input(batch)[0])
    return macs


def layers(model: str) -> list[tuple[str, tuple[int, ...]]]:
    """(name, weight shape) of each conv/linear layer, PyTorch layouts ([out, in(, kh, kw)]);
    every layer has a bias [out]."""
    if model == "mlp_s":
        return [("fc1", (32, 784)), ("fc2", (10, 32))]
    if model == "mlp_m":
        return [("fc1", (256, 784)), ("fc2", (128, 256)), ("fc3", (10, 128))]
    if model == "lenet":
        return [
            ("conv1", (6, 1, 5, 5)),
            ("conv2", (16, 6, 5, 5)),
            ("fc1", (120, 256)),
            ("fc2", (84, 120)),
            ("fc3", (10, 84)),
        ]
    raise ValueError(f"unknown model {model!r}")


def label_spec(model: str, batch: int) -> tuple[tuple[int, ...], str]:
    """The label's shape and numpy dtype: class indices (int32), or for an imported model whose
    loss compares with a tensor (the autoencoder's MSE: the input itself), float32."""
    if model in IMPORTED:
        label = torch_source(model).example_input(batch)[-1]
        return tuple(label.shape), "<f4" if label.dtype.is_floating_point else "<i4"
    return (batch,), "<i4"


def input_shape(model: str, batch: int) -> tuple[int, ...]:
    if model in IMPORTED:
        return tuple(torch_source(model).example_input(batch)[0].shape)
    return (batch, 1, 28, 28) if model == "lenet" else (batch, 784)


def param_shapes(model: str) -> list[tuple[str, tuple[int, ...]]]:
    """Every parameter in data-file order: per layer its weight, then its bias (an imported
    model's: its trainable parameters in PyTorch's order, by C symbol)."""
    if model in IMPORTED:
        return imported_params(model)
    return [
        shape
        for name, weight in layers(model)
        for shape in ((f"{name}_w", weight), (f"{name}_b", (weight[0],)))
    ]


def make_data(
    model: str, batch: int, seed: int = 0
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """PyTorch's default initialisation, U(+-1/sqrt(fan_in)) for weights and biases, a batch
    of U(0, 1) images and random labels: the same for every system. An imported model: its
    example's weights, input and labels."""
    if model in IMPORTED:
        x, y = torch_source(model).example_input(batch)
        params = [p.detach().numpy().copy() for p in torch_model(model).parameters()]
        return params, x.numpy(), y.numpy().astype(label_spec(model, batch)[1])
    rng = np.random.default_rng(seed)
    params = []
    for _name, weight in layers(model):
        bound = 1.0 / math.sqrt(math.prod(weight[1:]))
        params.append(rng.uniform(-bound, bound, weight).astype(np.float32))
        params.append(rng.uniform(-bound, bound, (weight[0],)).astype(np.float32))
    x = rng.uniform(0.0, 1.0, input_shape(model, batch)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    return params, x, y


def write_data(path: Path, params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> None:
    """Parameters in `param_shapes` order, then x, then y: little-endian float32, the labels
    int32 (class indices) or float32."""
    with open(path, "wb") as stream:
        for array in [*params, x]:
            stream.write(np.ascontiguousarray(array, "<f4").tobytes())
        stream.write(np.ascontiguousarray(y, "<f4" if y.dtype.kind == "f" else "<i4").tobytes())


def read_data(path: str, model: str, batch: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    raw, offset, params = Path(path).read_bytes(), 0, []
    for _name, shape in param_shapes(model):
        count = math.prod(shape)
        params.append(np.frombuffer(raw, "<f4", count, offset).reshape(shape).copy())
        offset += 4 * count
    shape = input_shape(model, batch)
    x = np.frombuffer(raw, "<f4", math.prod(shape), offset).reshape(shape).copy()
    label_shape, dtype = label_spec(model, batch)
    y = np.frombuffer(raw, dtype, math.prod(label_shape), offset + 4 * math.prod(shape))
    return params, x, y.reshape(label_shape).copy()


def step_flops(model: str, batch: int, opt: str) -> int:
    """2 FLOPs per multiply-accumulate of every conv/linear layer in the forward pass, the
    weight gradient and the input gradient (not for the first layer: the data needs none),
    plus the update, 2 (SGD) or 13 (Adam) per parameter. Activations, pooling and the loss
    are not counted: small, and not what a GEMM ceiling measures."""
    if model in IMPORTED:
        macs = imported_macs(model, 1)
        params = sum(math.prod(shape) for _name, shape in param_shapes(model))
        return 2 * batch * (2 * sum(macs) + sum(macs[1:])) + {"sgd": 2, "adam": 13}[opt] * params
    macs = []
    side = 28
    for name, weight in layers(model):
        if name.startswith("conv"):
            side = side - weight[2] + 1
            macs.append(math.prod(weight) * side * side)
            side //= 2
        else:
            macs.append(math.prod(weight))
    params = sum(math.prod(shape) for _name, shape in param_shapes(model))
    return 2 * batch * (2 * sum(macs) + sum(macs[1:])) + {"sgd": 2, "adam": 13}[opt] * params


# --- adir ---------------------------------------------------------------------------------


def build_module(model: str, batch: int):  # -> ModuleOp
    """The model in adir's tensor dialect, through the builder (parameters start at zero:
    the timing program loads the benchmark's weights over them). An imported model: traced
    from PyTorch as `adir-import` does."""
    from adir.frontends.builder import ModelBuilder

    if model in IMPORTED:
        import torch

        from adir.frontends.torch_import import import_module

        x, y = torch_source(model).example_input(batch)
        return import_module(
            torch_model(model),
            (x,),
            loss=torch_source(model).LOSS,
            label_shape=tuple(y.shape),
            label_dtype=y.dtype if y.dtype.is_floating_point else torch.int64,
        )

    b = ModelBuilder()
    params = {name: b.param(name, shape, init=0.0) for name, shape in param_shapes(model)}

    def linear(h, name):
        return b.add(b.matmul(h, params[f"{name}_w"], transpose_b=True), params[f"{name}_b"])

    inputs = [("x", input_shape(model, batch), "f32"), ("label", (batch,), "i32")]
    with b.function("loss", inputs, loss=True) as (x, label):
        if model == "mlp_s":
            logits = linear(b.sigmoid(linear(x, "fc1")), "fc2")
            b.ret(b.nll(b.log_softmax(logits), label))
        elif model == "mlp_m":
            h = b.relu(linear(b.relu(linear(x, "fc1")), "fc2"))
            b.ret(b.cross_entropy(linear(h, "fc3"), label))
        else:
            h = x
            for conv in ("conv1", "conv2"):
                h = b.conv2d(h, params[f"{conv}_w"], params[f"{conv}_b"])
                h = b.maxpool2d(b.relu(h), 2)
            h = b.flatten(h, start_dim=1)
            h = b.relu(linear(b.relu(linear(h, "fc1")), "fc2"))
            b.ret(b.cross_entropy(linear(h, "fc3"), label))
    return b.build()


@dataclass
class Compiled:
    """The C of one row and what the compiler reported on the way."""

    files: dict[str, str]
    pass_seconds: dict[str, float]
    arena: int
    arena_bound: int

    @property
    def seconds(self) -> float:
        return sum(self.pass_seconds.values())


def compile_adir(model: str, batch: int, opt: str) -> Compiled:
    """Build the module and run adir's pipeline, timing each stage."""
    from adir.backends.c.files import c_files
    from adir.backends.c.model import print_model
    from adir.context import adir_context
    from adir.passes import ADIR_PASSES, PLANNING_PASSES

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    module = build_module(model, batch)
    seconds["build"] = time.perf_counter() - start
    options = {"insert-optimizer": {"kind": opt, "lr": LR[opt]}}
    ctx = adir_context()
    for name in ("infer-shapes", "autodiff", "insert-optimizer", *PLANNING_PASSES):
        start = time.perf_counter()
        ADIR_PASSES[name]()(**options.get(name, {})).apply(ctx, module)
        seconds[name] = time.perf_counter() - start
    start = time.perf_counter()
    files = c_files(print_model(module, PREFIX))
    seconds["print-c"] = time.perf_counter() - start
    train = next(
        op
        for op in module.ops
        if getattr(op, "sym_name", None) and op.sym_name.data == "train_step"
    )
    return Compiled(
        files,
        seconds,
        train.attributes["adir.arena_size"].value.data,
        train.attributes["adir.arena_lower_bound"].value.data,
    )


def timing_main(model: str, batch: int) -> str:
    """A C program that loads the data file's weights and batch, runs CHECK_STEPS steps (the
    checks), warms up, then times single steps; it prints one `RESULT {json}` line."""
    names = ", ".join(f'"{name}"' for name, _shape in param_shapes(model))
    total = sum(math.prod(shape) for _name, shape in param_shapes(model))
    features = math.prod(input_shape(model, batch))
    label_shape, label_dtype = label_spec(model, batch)
    label_type = "float" if label_dtype == "<f4" else "int32_t"
    p = PREFIX
    return f"""\
/* Times {p}train_step (written by tools/bench.py): DATA MIN_SECONDS MAX_STEPS */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "{p}model.h"

#define LOADED {len(param_shapes(model))}
#define PARAM_FLOATS {total}
#define FEATURES {features}
#define LABELS {math.prod(label_shape)}
#define MAX_TIMED 1000000

static const char *const loaded[LOADED] = {{{names}}};

static double now(void)
{{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}}

static int ascending(const void *a, const void *b)
{{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}}

static size_t param_index(const char *name)
{{
    size_t i;
    for (i = 0; {p}param_name(i); ++i) {{
        if (strcmp({p}param_name(i), name) == 0) return i;
    }}
    fprintf(stderr, "no parameter %s\\n", name);
    exit(2);
}}

int main(int argc, char **argv)
{{
    static float x[FEATURES], initial[PARAM_FLOATS];
    static {label_type} y[LABELS];
    static double times[MAX_TIMED];
    double min_seconds, start, delta = 0.0;
    long max_steps, n = 0;
    float loss1 = 0.0f, loss10 = 0.0f;
    size_t i, j, at = 0;
    int step;
    FILE *data;
    if (argc != 4 || !(data = fopen(argv[1], "rb"))) {{
        fprintf(stderr, "usage: %s DATA MIN_SECONDS MAX_STEPS\\n", argv[0]);
        return 2;
    }}
    min_seconds = atof(argv[2]);
    max_steps = atol(argv[3]) < MAX_TIMED ? atol(argv[3]) : MAX_TIMED;
    {p}init(0u);
    for (i = 0; i < LOADED; ++i) {{
        const size_t index = param_index(loaded[i]), size = {p}param_size(index);
        if (fread({p}param_writable(index), sizeof(float), size, data) != size) return 3;
        memcpy(initial + at, {p}param_data(index), size * sizeof(float));
        at += size;
    }}
    if (fread(x, sizeof x[0], FEATURES, data) != FEATURES ||
        fread(y, sizeof y[0], LABELS, data) != LABELS) return 3;
    fclose(data);
    for (step = 1; step <= {CHECK_STEPS}; ++step) {{
        const float loss = {p}train_step(x, y);
        if (step == 1) loss1 = loss;
        loss10 = loss;
    }}
    for (i = 0, at = 0; i < LOADED; ++i) {{
        const size_t index = param_index(loaded[i]), size = {p}param_size(index);
        for (j = 0; j < size; ++j) delta += fabs((double){p}param_data(index)[j] - initial[at + j]);
        at += size;
    }}
    start = now();
    while (now() - start < 0.2) {p}train_step(x, y);
    start = now();
    while (n < max_steps && (n < 30 || now() - start < min_seconds)) {{
        const double before = now();
        {p}train_step(x, y);
        times[n++] = now() - before;
    }}
    qsort(times, (size_t)n, sizeof times[0], ascending);
    printf("RESULT {{\\"median_us\\": %.3f, \\"p10_us\\": %.3f, \\"p90_us\\": %.3f, "
           "\\"steps\\": %ld, \\"loss1\\": %.8g, \\"loss10\\": %.8g, \\"delta_l1\\": %.10g}}\\n",
           1e6 * times[n / 2], 1e6 * times[n / 10], 1e6 * times[n * 9 / 10], n,
           (double)loss1, (double)loss10, delta);
    return 0;
}}
"""


def build_c(
    directory: Path, compiled: Compiled, main: str, cc: str, extra: Sequence[str], work: Path
) -> dict[str, Path | str]:
    """Write the C and build it once per `C_BUILDS` entry (plus `extra` flags): the
    executable, or the error. The runtime's files, the same in every row, are compiled once a
    run for each build, in `work` (`runtime_objects`); a row compiles its model and main."""
    tools = str(Path(__file__).resolve().parent)
    if tools not in sys.path:  # tools/c_runtime.py, beside this file
        sys.path.insert(0, tools)
    from c_runtime import model_sources, runtime_objects

    directory.mkdir(parents=True, exist_ok=True)
    for name, text in {**compiled.files, "bench_main.c": main}.items():
        (directory / name).write_text(text)
    sources = model_sources(directory)
    built: dict[str, Path | str] = {}
    for build, flags in C_BUILDS.items():
        command = [cc, "-std=c99", *flags, *extra]
        try:
            objects = runtime_objects(work, tuple(command))
        except subprocess.CalledProcessError as error:
            built[build] = error.stderr.strip()[-300:]
            continue
        executable = directory / f"bench_{build}"
        completed = subprocess.run(
            [*command, "-I", str(directory), *sources, *objects, "-o", str(executable), "-lm"],
            capture_output=True,
            text=True,
        )
        built[build] = executable if completed.returncode == 0 else completed.stderr.strip()[-300:]
    return built


# --- the peers (each in its own process: `bench.py --worker SYSTEM ...`) ---------------------


def time_steps(step, min_time: float, max_steps: int) -> dict[str, float]:
    """Warm up for 0.2 s, then time single steps for min_time (at least 30): the median."""
    start = time.perf_counter()
    while time.perf_counter() - start < 0.2:
        step()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_steps and (len(times) < 30 or time.perf_counter() - start < min_time):
        before = time.perf_counter()
        step()
        times.append(time.perf_counter() - before)
    times.sort()
    n = len(times)
    return {
        "median_us": 1e6 * times[n // 2],
        "p10_us": 1e6 * times[n // 10],
        "p90_us": 1e6 * times[n * 9 // 10],
        "steps": n,
    }


def checked(step, params) -> dict[str, float]:
    """Run CHECK_STEPS steps: the losses of the first and the last, and the L1 norm of the
    parameter change (params() gives them as numpy arrays)."""
    before = [np.array(p, np.float64) for p in params()]
    losses = [step() for _ in range(CHECK_STEPS)]
    delta = sum(
        float(np.abs(np.array(p, np.float64) - q).sum())
        for p, q in zip(params(), before, strict=True)
    )
    return {"loss1": losses[0], "loss10": losses[-1], "delta_l1": delta}


TORCH_LOSSES = {"cross_entropy": "CrossEntropyLoss", "mse": "MSELoss"}
"""An imported model's `LOSS` -> its torch.nn loss (mean reduction, as adir's and JAX's)."""


def run_torch(
    model: str, batch: int, opt: str, data: str, min_time: float, max_steps: int,
    flush_denormals: bool = False, compiled: bool = False, float64: bool = False,
):  # fmt: skip
    """PyTorch eager, or with `compiled` torch.compile (inductor, its default backend): the
    forward with its loss (and so, through AOTAutograd, the backward) and the optimizer's step
    are compiled; the first step, which compiles them, is timed apart as `compile_s`. With
    `float64`, the same steps in double precision, checked and not timed: the reference of the
    loss check (`check`)."""
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.set_flush_denormal(flush_denormals)
    params, x, y = read_data(data, model, batch)
    if model in IMPORTED:
        net = torch_model(model)
        loss_fn = getattr(nn, TORCH_LOSSES[torch_source(model).LOSS])()
    elif model == "mlp_s":
        net = nn.Sequential(nn.Linear(784, 32), nn.Sigmoid(), nn.Linear(32, 10), nn.LogSoftmax(1))
        loss_fn = nn.NLLLoss()
    elif model == "mlp_m":
        net = nn.Sequential(
            nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
        )
        loss_fn = nn.CrossEntropyLoss()
    else:
        net = nn.Sequential(
            nn.Conv2d(1, 6, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(256, 120),
            nn.ReLU(),
            nn.Linear(120, 84),
            nn.ReLU(),
            nn.Linear(84, 10),
        )
        loss_fn = nn.CrossEntropyLoss()
    with torch.no_grad():
        for tensor, value in zip(net.parameters(), params, strict=True):
            tensor.copy_(torch.from_numpy(value))
    if float64:
        net, x = net.double(), x.astype(np.float64)
        y = y.astype(np.float64) if y.dtype.kind == "f" else y
    optimizer = (torch.optim.SGD if opt == "sgd" else torch.optim.Adam)(net.parameters(), LR[opt])
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    if y.dtype.kind != "f":
        yt = yt.long()

    def forward_loss(xt, yt):
        return loss_fn(net(xt), yt)

    update = optimizer.step
    if compiled:
        forward_loss, update = torch.compile(forward_loss), torch.compile(optimizer.step)

    def step() -> float:
        optimizer.zero_grad()
        loss = forward_loss(xt, yt)
        loss.backward()
        update()
        return loss.item()

    seconds: list[float] = []  # of each checked step: the first compiles

    def first_steps() -> float:
        start = time.perf_counter()
        loss = step()
        seconds.append(time.perf_counter() - start)
        return loss

    result = checked(first_steps, lambda: [t.detach().numpy() for t in net.parameters()])
    if float64:
        return {**result, "version": torch.__version__}
    if compiled:
        result["compile_s"] = seconds[0]
    return {**result, **time_steps(step, min_time, max_steps), "version": torch.__version__}


def run_jax(model: str, batch: int, opt: str, data: str, min_time: float, max_steps: int):
    import jax
    import jax.numpy as jnp

    params, x, y = read_data(data, model, batch)
    labels = jnp.asarray(y)

    if model in IMPORTED:  # tools/torch_to_jax.py: the torch module's graph, converted
        from torch_to_jax import loss as jax_loss
        from torch_to_jax import port

        ported, criterion = port(torch_model(model)), jax_loss(torch_source(model).LOSS)

        def loss_fn(p, h):
            return criterion(ported(p, h), labels)

    def forward(p, h):
        if model == "lenet":
            for i in (0, 2):
                h = jax.lax.conv_general_dilated(h, p[i], (1, 1), "VALID")
                h = jax.nn.relu(h + p[i + 1][None, :, None, None])
                h = jax.lax.reduce_window(
                    h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"
                )
            h = h.reshape(h.shape[0], -1)
            p = p[4:]
        for i in range(0, len(p), 2):
            h = h @ p[i].T + p[i + 1]
            if i + 2 < len(p):
                h = jax.nn.sigmoid(h) if model == "mlp_s" else jax.nn.relu(h)
        return h

    if model not in IMPORTED:

        def loss_fn(p, h):
            logp = jax.nn.log_softmax(forward(p, h), axis=1)
            return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    grad = jax.value_and_grad(loss_fn)

    def sgd(state, h):
        p = state
        loss, g = grad(p, h)
        return [w - LR["sgd"] * d for w, d in zip(p, g, strict=True)], loss

    def adam(state, h):
        p, m, v, t = state
        loss, g = grad(p, h)
        t = t + 1
        m = [0.9 * a + 0.1 * d for a, d in zip(m, g, strict=True)]
        v = [0.999 * a + 0.001 * d * d for a, d in zip(v, g, strict=True)]
        c1, c2 = 1 - 0.9**t, 1 - 0.999**t
        p = [
            w - LR["adam"] / c1 * a / (jnp.sqrt(b / c2) + 1e-8)
            for w, a, b in zip(p, m, v, strict=True)
        ]
        return (p, m, v, t), loss

    update = jax.jit(sgd if opt == "sgd" else adam, donate_argnums=0)
    p = [jnp.asarray(w) for w in params]
    state = (
        [p]
        if opt == "sgd"
        else [(p, [jnp.zeros_like(w) for w in p], [jnp.zeros_like(w) for w in p], jnp.float32(0))]
    )
    xj = jnp.asarray(x)

    def step() -> float:
        state[0], loss = update(state[0], xj)
        return float(loss)  # waits for the step

    def current():
        return state[0] if opt == "sgd" else state[0][0]

    result = checked(step, lambda: [np.asarray(w) for w in current()])
    return {**result, **time_steps(step, min_time, max_steps), "version": jax.__version__}


def worker(args: argparse.Namespace) -> None:
    common = (args.model, args.batch, args.opt, args.data, args.min_time, args.max_steps)
    try:
        if args.worker == "jax":
            result = run_jax(*common)
        else:
            compiled, float64 = args.worker == "torch-compile", args.worker == "torch-f64"
            result = run_torch(*common, args.flush_denormals, compiled, float64)
    except Exception as error:  # reported in the table, never fatal to the run
        result = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    print("RESULT " + json.dumps(result), flush=True)


# --- the orchestrator ---------------------------------------------------------------------


def flush_flags(args: argparse.Namespace) -> list[str]:
    """The C flags of the run's subnormal mode (runtime adir_float_mode.h)."""
    return ["-DADIR_FLUSH_DENORMALS"] if args.flush_denormals else []


def result_of(command: list[str], timeout: float, env: dict[str, str] | None = None) -> dict:
    """Run a worker; its `RESULT {json}` line, or {"error": ...}."""
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(completed.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT "))
    tail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"error": f"exit {completed.returncode}: {tail[0][:200]}"}


def numpy_gemm_gflops(n: int = 256, seconds: float = 0.5) -> float:
    """Single-core float32 GEMM n^3 with numpy (this process: one CPU, one BLAS thread)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    c = a @ b
    reps = max(1, int(2e7 / n**3))
    times: list[float] = []
    end = time.perf_counter() + seconds
    while len(times) < 7 or time.perf_counter() < end:
        before = time.perf_counter()
        for _ in range(reps):
            np.matmul(a, b, out=c)
        times.append((time.perf_counter() - before) / reps)
    return 2 * n**3 / sorted(times)[len(times) // 2] / 1e9


@dataclass
class Row:
    model: str
    batch: int
    opt: str
    flops: int
    results: dict[str, dict] = field(default_factory=dict)  # system -> RESULT
    reference: dict = field(default_factory=dict)  # PyTorch float64's RESULT (check's reference)
    compile_s: float = 0.0
    passes: dict[str, float] = field(default_factory=dict)
    arena: int = 0
    arena_bound: int = 0


SYSTEMS = ["adir O3-native", "adir O2", "torch eager", "torch.compile", "JAX jit"]
PEERS = ["torch eager", "torch.compile", "JAX jit"]


def run_row(model: str, batch: int, opt: str, args: argparse.Namespace, work: Path) -> Row:
    row = Row(model, batch, opt, step_flops(model, batch, opt))
    directory = work / f"{model}_b{batch}_{opt}"
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "data.bin"
    write_data(data, *make_data(model, batch))
    compiled = compile_adir(model, batch, opt)
    row.compile_s, row.passes = compiled.seconds, compiled.pass_seconds
    row.arena, row.arena_bound = compiled.arena, compiled.arena_bound
    built = build_c(
        directory / "c", compiled, timing_main(model, batch), args.cc, flush_flags(args), work
    )
    timing = [str(args.min_time), str(args.max_steps)]
    commands: dict[str, list[str] | str] = {}
    for build, executable in built.items():
        commands[f"adir {build}"] = (
            [str(executable), str(data), *timing]
            if isinstance(executable, Path)
            else f"{args.cc} failed: {executable}"
        )
    peers = {"torch eager": "torch", "torch.compile": "torch-compile"} if args.torch else {}
    if args.jax:
        peers["JAX jit"] = "jax"
    for system, name in peers.items():
        commands[system] = [
            sys.executable,
            __file__,
            "--worker",
            name,
            "--model",
            model,
            "--batch",
            str(batch),
            "--opt",
            opt,
            "--data",
            str(data),
            "--min-time",
            timing[0],
            "--max-steps",
            timing[1],
            *(["--flush-denormals"] if args.flush_denormals else []),
        ]
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    )
    # Rounds run every system in turn, and each keeps its fastest median: load that comes and
    # goes on a shared machine then hits all systems alike.
    for _round in range(args.rounds):
        for system, command in commands.items():
            if isinstance(command, str):
                row.results[system] = {"error": command}
                continue
            timeout = args.compile_timeout if system == "torch.compile" else args.timeout
            result = result_of(command, timeout, env)
            best = row.results.get(system)
            if (
                best is None
                or "error" in best
                or ("error" not in result and result["median_us"] < best["median_us"])
            ):
                row.results[system] = result
    if "torch eager" in commands and not isinstance(commands["torch eager"], str):
        reference = list(commands["torch eager"])
        reference[reference.index("--worker") + 1] = "torch-f64"
        row.reference = result_of(reference, args.timeout, env)
    return row


CHECKED = ("loss10", "delta_l1")


def distance(result: dict, reference: dict) -> float:
    """How far a system's step-10 loss and parameter change are from the reference's, relative:
    the larger of the two."""
    return max(abs(result[k] - reference[k]) / max(abs(reference[k]), 1e-30) for k in CHECKED)


PYTORCH_FLOAT32 = ("torch eager", "torch.compile")
"""PyTorch's own float32 implementations of the step: their spread from float64 is the row's."""


def allowance(row: Row, rtol: float) -> float:
    """How far from PyTorch float64 a float32 system may be on this row: rtol, or twice
    PyTorch float32's own distance where that is larger (the larger of eager's and
    torch.compile's: one implementation's rounding can land near float64 by chance, as eager
    does on the autoencoder's SGD row, 3e-4 where torch.compile is 1.2e-2). Ten steps of a
    deep float32 network can move far from exact arithmetic (MobileNetV1-0.25's batch norms
    on one sample: PyTorch float32 2-6% from float64 at step 10), and so do adir's -O2 and -O3
    builds from each other; every system is then held to what PyTorch float32 itself
    achieves, as the examples' tests do."""
    if not row.reference or "error" in row.reference:
        return rtol
    spreads = [
        distance(row.results[s], row.reference)
        for s in PYTORCH_FLOAT32
        if "error" not in row.results.get(s, {"error": 1})
    ]
    return max([rtol, *(2 * spread for spread in spreads)])


def check(row: Row, rtol: float) -> list[str]:
    """The systems whose step-10 loss or parameter change is further than `allowance` from
    PyTorch float64's (when it ran), else differs from PyTorch float32's (or the first
    system's) by more than rtol."""
    ran = {s: r for s, r in row.results.items() if "error" not in r}
    if row.reference and "error" not in row.reference:
        limit = allowance(row, rtol)
        return [system for system, result in ran.items() if distance(result, row.reference) > limit]
    if len(ran) < 2:
        return []
    reference = ran.get("torch eager") or next(iter(ran.values()))
    return [
        system
        for system, result in ran.items()
        if any(not math.isclose(result[k], reference[k], rel_tol=rtol) for k in CHECKED)
    ]


def us(result: dict | None) -> str:
    if result is None:
        return "-"
    if "error" in result:
        return "FAIL"
    value = result["median_us"]
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def table(rows: list[Row], gemm: float, rtol: float) -> str:
    head = [
        "model",
        "batch",
        "opt",
        *(f"{s} us" for s in SYSTEMS),
        "O2 / O3-native",
        "adir / best peer",
        "adir GFLOP/s (% GEMM)",
        "loss @10",
        "arena / bound B",
        "compile s",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        adir = row.results.get("adir O3-native", {})
        best = min(
            (
                row.results[p]["median_us"]
                for p in PEERS
                if "error" not in row.results.get(p, {"error": 1})
            ),
            default=None,
        )
        ok = "error" not in adir
        ratio = f"{adir['median_us'] / best:.2f}" if ok and best else "-"
        portable = row.results.get("adir O2", {"error": 1})
        slower = (
            f"{portable['median_us'] / adir['median_us']:.1f}"
            if ok and "error" not in portable
            else "-"
        )
        gflops = row.flops / adir["median_us"] / 1e3 if ok else 0.0
        rate = f"{gflops:.1f} ({100 * gflops / gemm:.0f}%)" if ok else "-"
        bad = check(row, rtol)
        limit = allowance(row, rtol)
        loss = (
            (f"{adir['loss10']:.5f}" if ok else "-")
            + (" MISMATCH: " + ", ".join(bad) if bad else " ok")
            + (f" (to f64: {limit:.1e}, 2x torch f32's)" if limit > rtol else "")
        )
        cells = [
            row.model,
            str(row.batch),
            row.opt,
            *(us(row.results.get(s)) for s in SYSTEMS),
            slower,
            ratio,
            rate,
            loss,
            f"{row.arena} / {row.arena_bound}",
            f"{row.compile_s:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def footnotes(rows: list[Row]) -> str:
    """Each torch.compile first step (its compilation, not in the step time), and why a
    system that failed did."""
    lines = []
    for row in rows:
        name = f"{row.model} b{row.batch} {row.opt}"
        compiled = row.results.get("torch.compile", {})
        if "compile_s" in compiled:
            lines.append(
                f"{name}: torch.compile's first step (it compiles) {compiled['compile_s']:.1f} s"
            )
        lines += [f"{name}: {s} FAIL: {r['error']}" for s, r in row.results.items() if "error" in r]
    return "\n".join(lines)


def machine() -> str:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as stream:
            cpu = next(
                line.split(":", 1)[1].strip() for line in stream if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    cc = subprocess.run(
        ["gcc" if shutil.which("gcc") else "cc", "--version"], capture_output=True, text=True
    ).stdout.splitlines()[:1]
    return (
        f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {cc[0] if cc else '?'}"
    )


def pin_to_one_cpu() -> int | None:
    """Pin this process (and so every worker it starts) to the last CPU it may use."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS)
    )
    parser.add_argument("--opts", default="sgd,adam", help="comma-separated: sgd, adam")
    parser.add_argument("--batches", default="", help="comma-separated batch sizes (default: all)")
    parser.add_argument(
        "--min-time", type=float, default=1.0, help="seconds of timed steps per system"
    )
    parser.add_argument("--max-steps", type=int, default=200000)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="time every system this many times in turn, keep each one's best",
    )
    parser.add_argument(
        "--quick", action="store_true", help="0.05 s per system: checks, not figures"
    )
    parser.add_argument(
        "--cc", default=os.environ.get("CC", "gcc" if shutil.which("gcc") else "cc")
    )
    parser.add_argument("--no-torch", dest="torch", action="store_false", help="skip PyTorch")
    parser.add_argument("--rtol", type=float, default=1e-3, help="of the loss check")
    parser.add_argument(
        "--flush-denormals", action="store_true",
        help="subnormals flushed to zero: adir built with -DADIR_FLUSH_DENORMALS, PyTorch with "
        "torch.set_flush_denormal(True)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=300, help="seconds per system")
    parser.add_argument(
        "--compile-timeout",
        type=float,
        default=900,
        help="seconds for torch.compile's worker, whose first step compiles (not timed)",
    )
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--keep", help="build in this directory and keep it")
    parser.add_argument(
        "--worker", choices=["torch", "torch-compile", "torch-f64", "jax"], help=argparse.SUPPRESS
    )
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--opt", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.quick:
        args.min_time, args.timeout = 0.05, 120
    args.torch = args.torch and importlib.util.find_spec("torch") is not None
    args.jax = importlib.util.find_spec("jax") is not None
    models, opts = args.models.split(","), args.opts.split(",")
    batches = {int(b) for b in args.batches.split(",") if b}
    rows = [r for r in ROWS if r[0] in models and r[2] in opts and (not batches or r[1] in batches)]
    if not rows:
        parser.error("no row matches --models / --opts / --batches")
    cpu = pin_to_one_cpu()
    started = time.perf_counter()
    gemm = numpy_gemm_gflops()
    notes = [
        f"{datetime.date.today()}, {machine()}; pinned to CPU {cpu}, one thread per system",
        f"numpy {np.__version__} float32 GEMM 256^3 on one core: {gemm:.1f} GFLOP/s",
        f"C: {args.cc} -std=c99 " + " / ".join(" ".join(f) for f in C_BUILDS.values()),
        "subnormals: "
        + (
            "flushed to zero (adir: -DADIR_FLUSH_DENORMALS; PyTorch: set_flush_denormal(True);"
            " JAX: XLA's own mode)"
            if args.flush_denormals
            else "kept, IEEE 754 (adir's default; PyTorch's; JAX: XLA's own mode)"
        ),
    ]
    if not args.jax:
        notes.append("JAX is not installed: no JAX column (pip install jax)")
    print("\n".join(notes), flush=True)
    done: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="adir-bench-") as scratch:
        work = Path(args.keep or scratch)
        for model, batch, opt in rows:
            row = run_row(model, batch, opt, args, work)
            done.append(row)
            failures = [f"{s}: {r['error']}" for s, r in row.results.items() if "error" in r]
            for failure in failures:
                print(f"  {model} b{batch} {opt}: {failure}", file=sys.stderr)
            print(
                f"  {model} b{batch} {opt}: "
                + ", ".join(f"{s} {us(r)}" for s, r in row.results.items()),
                flush=True,
            )
    print()
    print(table(done, gemm, args.rtol))
    print()
    print(footnotes(done))
    print(
        f"\nadir: median us per step of the -O3 -march=native build; best peer: the fastest of "
        f"{', '.join(PEERS)}; whole run {time.perf_counter() - started:.0f} s"
    )
    # The times are wall-clock: other work scheduled onto the pinned CPU lengthens them, so the
    # load says whether the machine was quiet (a load near 1, this run alone, on 2 CPUs).
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end (1, 5, 15 min): {load}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"notes": notes, "gemm_gflops": gemm, "rows": [row.__dict__ for row in done]},
                indent=1,
            )
        )
    return 1 if any(check(row, args.rtol) for row in done) else 0


if __name__ == "__main__":
    sys.exit(main())
