"""Trained parameters back into PyTorch: a `state_dict` with the model's own names.

    state = load_state_dict("weights.bin", model)     # the --c-main program's weights file
    model.load_state_dict(state)
    state = load_state_dict("run.npz", "model.mlir")  # `adir-run --save`, names from the IR

The file is a parameter blob (`adir/param_blob.py`: what the generated C's `save_params` and the
`--c-main` program write), which names each parameter by its PyTorch name (the importer's
`adir.torch_name`), or an `adir-run --save` file, which names them by symbol (`param_<symbol>`)
and so needs the IR to map them. Given the IR, parameters without a PyTorch name (optimizer
state, a hand-written model's) are left out; given the `torch.nn.Module`, the names its
`state_dict` does not have are, each value must have the shape of the module's tensor of that
name, and the keys the file does not hold (batch norm's
`num_batches_tracked`, which adir does not keep; what the forward pass never reads) keep the
module's current values, so that `model.load_state_dict(state)` is strict. A blob's integer
parameters (the int8 weights and int32 biases of level-2 quantized training) are left out:
`read_param_blob` gives them as integers.
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import torch
from torch import nn
from xdsl.dialects.builtin import ModuleOp

from adir.dialects.tensor import params as p
from adir.param_blob import MAGIC, TORCH_NAME, blob_name, read_param_blob

Reference = nn.Module | ModuleOp | str | os.PathLike | None


def load_state_dict(
    path: str | os.PathLike, reference: Reference = None
) -> dict[str, torch.Tensor]:
    """The parameters in `path` by their PyTorch names (see the module docstring); `reference`
    is the `torch.nn.Module` they are for, or the adir IR (a `ModuleOp` or a `.mlir` path),
    which an `adir-run --save` file needs. `ValueError` says what does not fit."""
    with open(path, "rb") as stream:
        data = stream.read()
    if data.startswith(MAGIC):
        # The int8 weights and int32 biases of level-2 int8 layers have no PyTorch tensor.
        arrays = {n: a for n, a in read_param_blob(data).items() if a.dtype.kind == "f"}
        if isinstance(reference, ModuleOp | str | os.PathLike):
            module = _ir(reference)
            torch_names = {blob_name(op) for op in _params(module) if TORCH_NAME in op.attributes}
            arrays = {name: a for name, a in arrays.items() if name in torch_names}
    elif zipfile.is_zipfile(io.BytesIO(data)):
        if not isinstance(reference, ModuleOp | str | os.PathLike):
            raise ValueError(
                f"{os.fspath(path)}: an adir-run --save file names parameters by symbol; give "
                "the IR (a ModuleOp or a .mlir path) to map them to PyTorch names"
            )
        arrays = _by_torch_name(np.load(io.BytesIO(data)), _ir(reference))
    else:
        raise ValueError(f"{os.fspath(path)}: neither a parameter blob nor an .npz file")
    state = {name: torch.from_numpy(np.array(a, np.float32)) for name, a in arrays.items()}
    if isinstance(reference, nn.Module):
        return _complete(state, reference, os.fspath(path))
    return state


def _ir(reference: ModuleOp | str | os.PathLike) -> ModuleOp:
    if isinstance(reference, ModuleOp):
        return reference
    from adir.context import parse_module

    with open(reference, encoding="utf-8") as stream:
        return parse_module(stream.read(), os.fspath(reference))


def _params(module: ModuleOp) -> list[p.ParamOp]:
    return [op for op in module.ops if isinstance(op, p.ParamOp)]


def _by_torch_name(npz: np.lib.npyio.NpzFile, module: ModuleOp) -> dict[str, np.ndarray]:
    arrays = {}
    for op in _params(module):
        key = f"param_{op.sym_name.data}"
        if TORCH_NAME in op.attributes and key in npz.files:
            arrays[blob_name(op)] = npz[key]
    return arrays


def _complete(
    state: dict[str, torch.Tensor], model: nn.Module, path: str
) -> dict[str, torch.Tensor]:
    own = model.state_dict()
    state = {name: value for name, value in state.items() if name in own}
    if not state:
        raise ValueError(f"{path}: no name of the model's state_dict is in the file")
    for name, value in state.items():
        if tuple(own[name].shape) != tuple(value.shape):
            raise ValueError(
                f"{path}: {name} has shape {tuple(value.shape)}, the model's "
                f"{tuple(own[name].shape)}"
            )
    return {name: state.get(name, tensor).to(tensor.dtype) for name, tensor in own.items()}
