"""plan-memory's picture (`svg=`, `--memory-svg`) and JSON (`json=`, `--memory-json`) of a
module with two planned functions: one SVG document that parses as XML, a panel per function
with its buffers, axes, arena size and lower bound, the persistent RAM beside them, and that
renders to PNG; and the same plan as JSON."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from adir.context import adir_context, parse_module
from adir.passes.plan_memory import PlanMemoryPass

SVG = "{http://www.w3.org/2000/svg}"
ADIR_OPT = Path(sys.executable).parent / "adir-opt"

# @f: %a (16 floats, 64 bytes) and %b are live together at the neg (op 3); %c, returned, may
# reuse %a's bytes after it: arena 128 = the lower bound, 192 with no reuse. @g: one buffer with
# no SSA name (8 bytes, aligned to 16), returned.
TWO_FUNCTIONS = """
func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  adir_kernel.exp ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  adir_kernel.neg ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  %c = memref.alloc() : memref<16xf32>
  adir_kernel.exp ins(%b : memref<16xf32>) outs(%c : memref<16xf32>)
  func.return %c : memref<16xf32>
}
func.func @g(%x: memref<2xf32>) -> memref<2xf32> {
  %0 = memref.alloc() : memref<2xf32>
  adir_kernel.exp ins(%x : memref<2xf32>) outs(%0 : memref<2xf32>)
  func.return %0 : memref<2xf32>
}
"""

# A tensor-level model for the driver: SGD keeps its four-float weight @w in RAM (16 bytes).
TINY_MODEL = """
adir.param @w : tensor<4xf32> = #adir.normal<seed = 3>
func.func @loss(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y = adir.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = adir.sum %y : tensor<4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


@pytest.fixture
def reports(tmp_path: Path) -> tuple[ET.Element, dict]:
    """The SVG root and the JSON document of TWO_FUNCTIONS's plan."""
    module = parse_module(TWO_FUNCTIONS, "two.mlir")
    svg, plan = tmp_path / "plan.svg", tmp_path / "plan.json"
    PlanMemoryPass(svg=str(svg), json=str(plan)).apply(adir_context(), module)
    return ET.parse(svg).getroot(), json.loads(plan.read_text())


def texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def rect_titles(element: ET.Element) -> list[str]:
    return [
        title.text or ""
        for rect in element.iter(f"{SVG}rect")
        for title in rect.findall(f"{SVG}title")
    ]


def test_one_svg_document_with_a_panel_per_function(reports) -> None:
    root, _ = reports
    assert root.tag == f"{SVG}svg"
    panels = root.findall(f"{SVG}g")
    assert [p.get("id") for p in panels] == ["plan-0", "plan-1"]
    assert root.get("height") == "800"  # two 400-pixel panels, one above the other
    f, g = panels
    assert (
        texts(f)[0] == "@f: arena 128 bytes, lower bound 128 (arena / bound = 1.0000), no reuse 192"
    )
    assert texts(g)[0] == "@g: arena 16 bytes, lower bound 16 (arena / bound = 1.0000), no reuse 16"


def test_buffers_are_drawn_and_named_where_the_name_fits(reports) -> None:
    root, plan = reports
    f, g = root.findall(f"{SVG}g")
    offsets = {b["name"]: b["offset"] for b in plan["functions"][0]["buffers"]}
    # Live from the op that writes it to the last that reads it; %c to the end (op 7, after
    # the 7 ops 0..6), as the caller reads it.
    assert sorted(t for t in rect_titles(f) if t.startswith("%")) == [
        f"%a: 64 bytes at offset {offsets['a']}, live at ops 1-3",
        f"%b: 64 bytes at offset {offsets['b']}, live at ops 3-5",
        f"%c: 64 bytes at offset {offsets['c']}, live at ops 5-7",
    ]
    # Each box is a quarter of the plot or more across and half of it high: every name fits.
    assert {"%a", "%b", "%c"} <= set(texts(f))
    # A buffer with no SSA name is named by where it lives; the < > are escaped in the file.
    assert "<alloc at op 1>" in texts(g)


def test_axes_ticks_arena_and_bound(reports) -> None:
    f, _ = reports[0].findall(f"{SVG}g")
    labels = texts(f)
    # Bytes up, 0..128 in nice steps of 50; time across, ops 0..8 in steps of 2.
    assert {"0", "50", "100", "2", "4", "6", "8"} <= set(labels)
    assert {"arena offset (bytes)", "op index (time)"} <= set(labels)
    assert {"arena 128", "lower bound 128"} <= set(labels)
    assert sum(1 for line in f.iter(f"{SVG}line") if line.get("stroke-dasharray")) == 2
    assert {"persistent RAM", "0 bytes"} <= set(labels)  # no parameters in this module


def test_the_json_holds_the_same_plan(reports) -> None:
    _, plan = reports
    assert (plan["format"], plan["version"], plan["arena_size"]) == ("adir-memory-plan", 1, 128)
    assert plan["ram"] == {
        "arena": 128,
        "trainable parameters": 0,
        "optimizer state": 0,
        "other mutable state": 0,
        "frozen, drawn at init": 0,
        "total": 128,
    }
    f, g = plan["functions"]
    assert (f["name"], f["ops"], f["arena_size"], f["lower_bound"], f["naive_size"]) == (
        "f",
        7,
        128,
        128,
        192,
    )
    assert [(b["name"], b["bytes"], b["first"], b["last"]) for b in f["buffers"]] == [
        ("a", 64, 1, 3),
        ("b", 64, 3, 5),
        ("c", 64, 5, 7),
    ]
    offsets = [b["offset"] for b in f["buffers"]]
    assert offsets[0] == offsets[2] != offsets[1]  # %c reuses %a's bytes
    assert g["buffers"] == [{"name": None, "bytes": 16, "first": 1, "last": 3, "offset": 0}]


def test_the_driver_s_flags_draw_the_persistent_ram(tmp_path: Path) -> None:
    (tmp_path / "tiny.mlir").write_text(TINY_MODEL)
    done = subprocess.run(
        [
            ADIR_OPT,
            *("--optimizer=sgd", "--plan-memory", "--memory-svg=plan.svg"),
            *("--memory-json=plan.json", "tiny.mlir", "-o", "planned.mlir"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    root = ET.parse(tmp_path / "plan.svg").getroot()
    assert len(root.findall(f"{SVG}g")) == 2  # @loss and @train_step
    assert {"16 bytes", "trainable parameters: 16"} <= set(texts(root))
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert [f["name"] for f in plan["functions"]] == ["loss", "train_step"]
    assert plan["ram"]["trainable parameters"] == 16


def test_the_picture_renders_to_png(tmp_path: Path) -> None:
    """librsvg's renderer reads the document (`tools/setup.sh test` installs it)."""
    if shutil.which("rsvg-convert") is None:
        pytest.fail("rsvg-convert not found: apt-get install librsvg2-bin")
    module = parse_module(TWO_FUNCTIONS, "two.mlir")
    PlanMemoryPass(svg=str(tmp_path / "plan.svg")).apply(adir_context(), module)
    subprocess.run(["rsvg-convert", tmp_path / "plan.svg", "-o", tmp_path / "plan.png"], check=True)
    png = (tmp_path / "plan.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (1100, 800)
