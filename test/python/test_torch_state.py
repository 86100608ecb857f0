"""Parameters back into PyTorch by name (adir/frontends/torch_state.py) and the blob format
(adir/param_blob.py) in Python: a blob reads back as it was written, a damaged one is an error
saying what is wrong, and `adir-run --save` output maps to the model's `state_dict` names
through the IR's `adir.torch_name`."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from c_testing import run_pipeline
from torch import nn

from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import import_module, load_state_dict
from adir.param_blob import read_param_blob, write_param_blob
from adir.tools.adir_run import main as adir_run


def test_blob_reads_back_what_was_written() -> None:
    values = {
        "net.0.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "scalar": np.float32(2.5).reshape(()),
        "abc": np.array([-1.0], np.float32),
    }
    blob = write_param_blob(values)
    # magic, version 1, 3 entries; the values start after the table (a multiple of 4)
    assert blob[:8] == b"ADIRPARM" and struct.unpack_from("<III", blob, 8)[:2] == (1, 3)
    start = struct.unpack_from("<I", blob, 16)[0]
    assert start % 4 == 0 and len(blob) == start + 4 * (6 + 1 + 1)
    back = read_param_blob(blob)
    assert list(back) == list(values)
    for name, array in values.items():
        assert back[name].shape == array.shape and np.array_equal(back[name], array)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b"ADIRPARN" + b[8:], "not an adir parameter blob"),
        (lambda b: b[:-1], "the blob has 55 bytes; its table describes 56"),
        (lambda b: b + b"\0\0\0\0", "the blob has 60 bytes; its table describes 56"),
        (lambda b: b[:22], "inside its table"),
        (lambda b: b[:8] + struct.pack("<I", 3) + b[12:], "blob version 3; this adir reads"),
    ],
)
def test_a_damaged_blob_is_an_error_saying_what_is_wrong(damage, message: str) -> None:
    blob = write_param_blob({"w": np.ones((2, 2), np.float32)})
    # 20 (magic, version, count, offset) + 4 + 4 (the name "w", padded) + 4 + 8 (rank, dims)
    # + 16 (four float32 values)
    assert len(blob) == 56
    with pytest.raises(ValueError, match=message):
        read_param_blob(damage(blob))


def test_adir_run_save_output_maps_back_to_state_dict_names(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    module = import_module(model, (torch.randn(5, 4),), loss="cross_entropy")
    trained = run_pipeline(module, "autodiff,insert-optimizer{kind=adam lr=0.01}")
    ir = tmp_path / "model.mlir"
    ir.write_text(module_to_text(trained))
    saved = tmp_path / "run.npz"
    arguments = [str(ir), "--func", "train_step", "--random-inputs", "0", "--repeat", "3"]
    assert adir_run([*arguments, "--save", str(saved)]) == 0

    state = load_state_dict(saved, ir)
    assert set(state) == {
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "3.weight", "3.bias",
    }  # fmt: skip
    npz = np.load(saved)
    assert torch.equal(state["1.running_var"], torch.from_numpy(npz["param_p1_running_var"]))
    assert not np.allclose(npz["param_p0_weight"], model[0].weight.detach().numpy())  # trained
    model.load_state_dict(load_state_dict(saved, ir) | {"1.num_batches_tracked": torch.tensor(0)})
    assert torch.equal(model[3].bias, state["3.bias"])

    with pytest.raises(ValueError, match="names parameters by symbol; give the IR"):
        load_state_dict(saved, model)


def test_a_blob_for_the_module_has_its_shapes(tmp_path: Path) -> None:
    model = nn.Linear(3, 2)
    path = tmp_path / "w.bin"
    path.write_bytes(write_param_blob({"weight": np.zeros((3, 2), np.float32)}))
    with pytest.raises(ValueError, match=r"weight has shape \(3, 2\), the model's \(2, 3\)"):
        load_state_dict(path, model)
    path.write_bytes(write_param_blob({"weight": np.ones((2, 3), np.float32), "w_m": np.ones(1)}))
    state = load_state_dict(path, model)  # w_m (optimizer state) is not the model's: left out
    assert set(state) == {"weight", "bias"} and torch.equal(state["bias"], model.bias.detach())
    assert torch.equal(state["weight"], torch.ones(2, 3))


def test_a_version_2_blob_holds_integers_and_refuses_an_unknown_element_type() -> None:
    """A blob with an int8 and an int32 parameter is version 2 and reads back as integers;
    its table's type code (byte 36 for a first parameter of a one-letter name and rank 1: the
    20-byte header, 4 + 4 bytes of name, 4 of rank, 4 of dim) must be 0, 1 or 2."""
    values = {"w": np.array([-128, 127], np.int8), "b": np.array([-(2**31), 7], np.int32)}
    blob = bytearray(write_param_blob(values))
    assert blob[8:12] == struct.pack("<I", 2) and blob[36:40] == struct.pack("<I", 1)
    read = read_param_blob(bytes(blob))
    assert read["w"].dtype == np.int8 and read["b"].dtype == np.int32
    assert read["w"].tolist() == [-128, 127] and read["b"].tolist() == [-(2**31), 7]
    blob[36] = 7
    with pytest.raises(ValueError, match="'w' has element type 7"):
        read_param_blob(bytes(blob))
