"""docs/frontends.md's list of `torch.nn` modules is true and complete for the examples: each
row's module, built as the row writes it, imports (training mode) and its imported forward, run
by the interpreter in float32 on a random input of the row's shape, gives PyTorch's float32
outputs to 1e-5 of their largest magnitude (both round the same float32 operations, summed in
their own orders over at most a few dozen terms: about 1e-6 apart); and every `torch.nn` module
that a model of examples/torch/ is built from has a row."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from examples_testing import example_names, load_example
from torch import nn

from adir.frontends.torch_import import import_module
from adir.interpreter import Session

DOCS = Path(__file__).resolve().parents[2] / "docs" / "frontends.md"
CODE = re.compile(r"`([^`]*)`")
CONTAINERS = (nn.ModuleList, nn.ModuleDict)  # no forward of their own


def module_rows() -> list[tuple[str, str, str]]:
    """(module, constructor, input) of each row of the docs' table of PyTorch modules."""
    text = DOCS.read_text()
    section = text[text.index("### PyTorch modules") :]
    rows = []
    for line in section[section.index("\n|") + 1 :].splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, built, shape = (cell.strip() for cell in line.strip("|").split(" | "))
        rows.append((CODE.findall(name)[0], CODE.findall(built)[0], shape))
    return rows


ROWS = module_rows()


def example_input(shape: str) -> torch.Tensor:
    dims = tuple(int(d) for d in CODE.findall(shape)[0].split(","))
    if "indices below" in shape:
        return torch.randint(0, int(shape.rsplit(" ", 1)[-1]), dims)
    return torch.randn(dims)


def flattened(outputs) -> list[torch.Tensor]:
    if isinstance(outputs, tuple):
        return [tensor for output in outputs for tensor in flattened(output)]
    return [outputs]


@pytest.mark.parametrize(("name", "built", "shape"), ROWS, ids=[row[0] for row in ROWS])
def test_listed_module_imports_and_computes_what_pytorch_does(
    name: str, built: str, shape: str
) -> None:
    torch.manual_seed(0)
    model = eval(built, {"nn": nn, "torch": torch})  # the docs' own code
    assert isinstance(model, eval(name, {"nn": nn})) or name in built
    x = example_input(shape)
    inputs = (x, x, x) if isinstance(model, nn.MultiheadAttention) else (x,)
    module = import_module(model, inputs)
    module.verify()
    with torch.no_grad():
        expected = model(*inputs)
    expected = flattened(expected)  # LSTM: (output, (h, c))
    session = Session(module, np.float32)
    arguments = [
        i.numpy().astype(np.int32) if not i.is_floating_point() else i.numpy() for i in inputs
    ]
    outputs = session.call("forward", *arguments)
    assert len(outputs) == len(expected)
    for output, reference in zip(outputs, expected, strict=True):
        reference = reference.numpy()
        scale = float(np.abs(reference).max())
        np.testing.assert_allclose(output, reference, rtol=1e-5, atol=1e-5 * scale, err_msg=name)


def test_every_module_of_the_examples_is_listed() -> None:
    listed = tuple(eval(name, {"nn": nn}) for name, _, _ in ROWS)
    unlisted = set()
    for name in example_names():
        example = load_example(name)
        for factory in ("model", "model_with_relu"):
            if not hasattr(example, factory):
                continue
            for layer in getattr(example, factory)().modules():
                from_torch = type(layer).__module__.startswith("torch.nn")
                if from_torch and not isinstance(layer, listed + CONTAINERS):
                    unlisted.add(type(layer).__name__)
    assert not unlisted
