"""How long xDSL takes to read a model whose parameters are given as data (about 1M f32 values).

    python tools/bench_parse.py                       784-1000-200-80-10 MLP, 1,002,090 params
    python tools/bench_parse.py --layers 784,32,10 --repeat 5

Builds an MLP with random weights as dense data with the builder (what `adir-import` writes for
a pretrained model), prints it (large tensors print as hex, `dense<"0x...">`), then times
parsing and verifying the text, best of `--repeat`. For comparison it also times the decimal
list form (`dense<[0.1, ...]>`) on a slice of `--decimal-sample` values and scales it to the
model's size. Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import itertools
import re
import time

import numpy as np

from adir.context import parse_module
from adir.frontends.builder import ModelBuilder, module_to_text


def mlp_text(layers: list[int], seed: int = 0) -> tuple[str, int]:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    params = []
    for index, (fan_in, out) in enumerate(itertools.pairwise(layers), 1):
        bound = 1 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (out, fan_in)).astype(np.float32)
        bias = rng.uniform(-bound, bound, (out,)).astype(np.float32)
        params.append(
            (b.param(f"w{index}", w.shape, init=w), b.param(f"b{index}", (out,), init=bias))
        )
    inputs = [("x", (1, layers[0]), "f32"), ("label", (1,), "i32")]
    with b.function("loss", inputs, loss=True) as (x, label):
        h = x
        for index, (w, bias) in enumerate(params, 1):
            h = b.linear(h, w, bias)
            h = b.relu(h) if index < len(params) else h
        b.ret(b.cross_entropy(h, label))
    count = sum(int(np.prod(p.type.get_shape())) for pair in params for p in pair)
    return b.module_to_text(), count


def best_of(repeat: int, action) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def parse_and_verify(text: str) -> None:
    module = parse_module(text, "bench.mlir")
    module.verify()


def decimal_seconds_per_value(sample: int) -> float:
    """Parse time per value of the decimal list form, from one param of `sample` values."""
    values = np.random.default_rng(1).standard_normal(sample).astype(np.float32)
    listed = ", ".join(f"{v:.9g}" for v in values)
    text = f"adir.param @w : tensor<{sample}xf32> = dense<[{listed}]> : tensor<{sample}xf32>\n"
    return best_of(1, lambda: parse_and_verify(text)) / sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="784,1000,200,80,10")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--decimal-sample", type=int, default=20000)
    args = parser.parse_args()
    layers = [int(n) for n in args.layers.split(",")]

    start = time.perf_counter()
    text, count = mlp_text(layers)
    build = time.perf_counter() - start
    module = parse_module(text, "bench.mlir")
    print_time = best_of(args.repeat, lambda: module_to_text(module))
    parse_time = best_of(args.repeat, lambda: parse_and_verify(text))
    hex_digits = sum(len(m) for m in re.findall(r'"0x([0-9A-F]*)"', text))
    decimal = decimal_seconds_per_value(args.decimal_sample) * count

    print(f"model: MLP {args.layers}, {count:,} f32 parameters as dense data")
    print(f"text: {len(text) / 1e6:.1f} MB, {hex_digits / 1e6:.1f} MB of it hex digits")
    print(f"build with the builder and print: {build:.2f} s")
    print(f"print: {print_time:.3f} s (best of {args.repeat})")
    print(f"parse + verify: {parse_time:.3f} s (best of {args.repeat})")
    print(
        f"the same values as decimal lists would take about {decimal:.0f} s to parse "
        f"(measured on {args.decimal_sample:,} values)"
    )


if __name__ == "__main__":
    main()
