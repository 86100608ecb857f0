"""`adir-opt`: xDSL's opt driver with adir's dialects, passes and pipeline shortcuts.

    adir-opt model.mlir -p 'infer-shapes'                   any pipeline, xDSL syntax
    adir-opt --autodiff --plan-memory model.mlir            shortcuts, canonical order

Every xDSL flag keeps working (`-p`, `--split-input-file`, `--verify-diagnostics`,
`--print-op-generic`, `-t`, `-o`, ...). What this driver adds:

- Shortcut flags expand to passes in one fixed order, whatever order they are given in, after
  which `-p` runs (`SHORTCUT_ORDER` below).
- Errors are diagnostics, `file:line:col: error: message` with the source line and a caret, and
  exit code 1; the traceback only with `--debug`.
- `-o` is written only when the whole run succeeds, the way the shell's `>` writes (a
  symbolic link is followed, a device or FIFO is written in place) but atomically where the
  target is a regular file: a failed run leaves the previous output untouched and no partial
  file; `-o -` is stdout; a write error is a diagnostic (`adir.output_files`).
- `--emit-c=DIR` is all or nothing: every file is written to a temporary directory and moved
  into DIR only when all were written. Existing files are replaced, each one whose content
  changed is named in a note on stderr; a name in DIR that is not a regular file (a directory,
  a link) fails the run, naming it, with DIR unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import math
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from io import BytesIO
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from adir import __version__
from adir.backends.c.cmake import cmake_files
from adir.backends.c.cortex_m import BOARDS, Board, board_files, model_ram, static_budget
from adir.backends.c.files import c_files
from adir.backends.c.harness import harness_source
from adir.backends.c.model import IDENTIFIER as C_IDENTIFIER
from adir.backends.c.model import print_model
from adir.backends.c.names import default_prefix
from adir.backends.c.packages import PACKAGES, package_files
from adir.backends.c.size_limits import HOST
from adir.backends.c.target import CTarget
from adir.context import DIALECTS, LocatedParser
from adir.diagnostics import OpWarning
from adir.function_structure import check_single_blocks
from adir.limits import parse_size
from adir.output_files import STDOUT, write_directory, write_file
from adir.passes.select_kernels import KERNEL_SETS
from adir.passes.select_kernels.targets import TARGETS
from adir.tools.error_reporting import (
    DiagnosticError,
    at_pipeline,
    caret_lines,
    format_parse_error,
    locate_failure,
    op_location,
    pipeline_error,
    repeated_option,
    report_errors,
    spec_syntax_error,
)
from adir.tools.files import decode
from adir.tools.pass_timing import StageTimer
from adir.universe import available_passes

# (flag attribute, pass spec) in the order the passes run. `--plan-memory` needs buffers, so it
# brings `bufferize`; every shortcut brings `infer-shapes` first.
# `--train=suggested`: the scheme suggest-update-scheme picks for --sram.
SUGGESTED_SCHEME = "suggested"

SHORTCUT_ORDER = [
    "infer-shapes",
    "apply-update-scheme",  # first: it decides which batchnorms freeze-batchnorm freezes
    "freeze-batchnorm",
    "derive-predict",
    # quantize-frozen-prefix{level=2}: before autodiff, which then differentiates the int8 layers
    "quantize-frozen-prefix (level 2)",
    "autodiff",
    "insert-optimizer",
    "quantize-frozen-prefix",  # after insert-optimizer: its stores say what trains
    "fuse-expand-depthwise",  # on the int8 prefix that quantize-frozen-prefix made
    "in-place-depthwise",  # the depthwise convs that fuse-expand-depthwise left
    "fuse-quantize-conv",  # the image's quantization, once the blocks' peaks are lowered
    "fuse-weight-updates",
    "recompute-activations",
    "reorder-updates",
    "fuse-batchnorm-relu",  # after recompute-activations, which recomputes the unfused ops
    "bufferize",
    "select-kernels",
    "plan-memory",
]


class AdirOptMain(xDSLOptMain):
    version_format = f"adir-opt (adir {__version__}, xdsl {{xdsl_version}})"

    def register_all_dialects(self) -> None:
        for name, factory in DIALECTS.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        """adir's passes beside every pass `xdsl-opt` offers (adir/universe.py)."""
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from xdsl.targets.mlir import MLIRTarget

        self.available_targets["mlir"] = lambda: MLIRTarget
        self.available_targets["c"] = lambda: CTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # A bad command line is exit code 1 like every other error, not argparse's 2.
        arg_parser.error = _command_line_error  # type: ignore[method-assign]
        super().register_all_arguments(arg_parser)
        # xDSL's -o, with what adir-opt's writing of it does (`adir.output_files`).
        arg_parser._option_string_actions["-o"].help = (
            "write the output here on success (- is stdout): a regular file is replaced "
            "atomically, a symbolic link is followed, a device or FIFO is written in place"
        )
        # xDSL declares -t as a plain string and parses it after argparse, where a syntax
        # error escapes as a traceback: check it as argparse reads it.
        arg_parser._option_string_actions["--target"].type = self.target_spec
        arg_parser.add_argument(
            "--debug", action="store_true", help="show Python tracebacks on errors"
        )
        arg_parser.add_argument(
            "--verify-each",
            action="store_true",
            help="verify the IR after every pass, not only the input and the result",
        )
        group = arg_parser.add_argument_group(
            "pipeline shortcuts (run in this order, before any -p pipeline)"
        )
        group.add_argument(
            "--infer-shapes", action="store_true", help="fill in unknown result shapes"
        )
        group.add_argument(
            "--predict",
            action="store_true",
            help="derive @predict, the loss function's prediction in eval mode",
        )
        group.add_argument(
            "--predict-batch",
            type=int,
            metavar="N",
            help="with --predict: the batch of @predict's inputs (default 1; 0 keeps the "
            "training batch)",
        )
        group.add_argument("--autodiff", action="store_true", help="derive the gradient function")
        group.add_argument(
            "--train",
            metavar="SCHEME",
            help="train only what the sparse update scheme selects (bias, last:K, "
            "channels:F@layers, ...; docs/sparse_updates.md): apply-update-scheme",
        )
        group.add_argument(
            "--suggest-update-scheme",
            action="store_true",
            help="with --optimizer and --sram (or --c-board: what its --c-ram leaves the model "
            "after the stack, heap and C library): train the sparse scheme that fits the budget, "
            "chosen greedily by trained values per byte (--train=suggested does the same), and "
            "print it (suggest-update-scheme; docs/sparse_updates.md)",
        )
        group.add_argument(
            "--optimizer",
            choices=["sgd", "adam", "adamw"],
            help="insert this optimizer and produce the training step",
        )
        group.add_argument("--lr", type=learning_rate, help="learning rate for --optimizer")
        group.add_argument(
            "--train-frozen-batchnorm",
            action="store_true",
            help="with --autodiff or --optimizer: keep a batchnorm whose gamma is "
            "{trainable = false} (its beta frozen or trained, as --train=bias does) in training "
            "mode (by default it runs with its running statistics and, if all of it is frozen, "
            "is folded into a frozen conv: freeze-batchnorm)",
        )
        group.add_argument(
            "--quantize-frozen",
            nargs="?",
            const="",
            metavar="CALIBRATION.npy",
            help="with --optimizer: run the frozen first layers of the training step on int8 "
            "kernels, weights in flash, calibrated on the given inputs (stacked on axis 0) or on "
            "32 standard-normal ones, each 1x1 expansion fused into its depthwise conv, the "
            "depthwise conv at the peak in place and the image quantized inside the first conv "
            "where that is the peak (quantize-frozen-prefix, fuse-expand-depthwise, "
            "in-place-depthwise, fuse-quantize-conv; docs/quantized_training.md)",
        )
        group.add_argument(
            "--quantize-level",
            type=int,
            choices=(1, 2),
            default=1,
            help="with --quantize-frozen: 1 (default) quantizes the frozen prefix after "
            "insert-optimizer; 2 also makes each trainable conv and linear layer int8 with int8 "
            "weights and int32 biases that SGD updates (quantize-frozen-prefix{level=2}, before "
            "autodiff; level 2 of quantized training, docs/quantized_training.md)",
        )
        group.add_argument(
            "--no-qas",
            action="store_true",
            help="with --quantize-level=2: no quantization-aware scaling of the integer "
            "gradients (step scales 1)",
        )
        group.add_argument(
            "--recompute",
            action="store_true",
            help="recompute cheap forward values in the backward pass where that lowers the "
            "arena, and report them (recompute-activations)",
        )
        group.add_argument(
            "--bufferize", action="store_true", help="lower to destination-passing buffers"
        )
        group.add_argument(
            "--plan-memory",
            action="store_true",
            help="place every buffer in one static arena (implies --bufferize)",
        )
        group.add_argument(
            "--memory-report",
            action="store_true",
            help="with --plan-memory: print each function's memory plan to stderr",
        )
        group.add_argument(
            "--memory-svg",
            metavar="FILE",
            help="with --plan-memory: draw every function's memory plan in one SVG document",
        )
        group.add_argument(
            "--memory-json",
            metavar="FILE",
            help="with --plan-memory: write every function's memory plan as JSON "
            "(the format: adir/passes/plan_memory/plan_json.py)",
        )
        group.add_argument(
            "--sram",
            metavar="SIZE",
            help="with --plan-memory: the SRAM budget of a step (bytes, or K / M: 256K); a step "
            "whose arena, trainable parameters, optimizer state and other mutable state need "
            "more is an error at the op at the peak (plan-memory{sram=...})",
        )

        c_group = arg_parser.add_argument_group("C output")
        c_group.add_argument(
            "--emit-c",
            metavar="DIR",
            help="write <prefix>model.h, <prefix>model.c, the runtime kernels and a "
            "CMakeLists.txt to DIR, all or none (implies --plan-memory; the IR is then printed "
            "only with -o); existing files are replaced and those whose content changed are "
            "named on stderr",
        )
        c_group.add_argument(
            "--c-prefix",
            metavar="PREFIX",
            help="prefix of the C names and files (default: the input file's name and `_`, "
            "mnist_mlp_ for mnist_mlp.mlir; none for standard input; --c-prefix= for none)",
        )
        c_group.add_argument(
            "--c-kernels",
            choices=list(KERNEL_SETS),
            help="with --plan-memory or --emit-c: the kernels select-kernels may choose: adir's "
            "tuned kernels where they apply (the default), the reference kernels only, or "
            "CMSIS-DSP (float, build with its sources) or CMSIS-NN (int8, docs/int8.md) where "
            "they compute the op, adir's elsewhere (adir/passes/select_kernels/)",
        )
        c_group.add_argument(
            "--c-target",
            choices=list(TARGETS),
            help="with --plan-memory or --emit-c: the CPU the C is built for, as select-kernels "
            "takes it (default host; --c-board implies its CPU)",
        )
        c_group.add_argument(
            "--c-board",
            choices=sorted(BOARDS),
            help="with --emit-c: also write startup code, a linker script, a Makefile and a "
            "CMake toolchain file for this board that QEMU emulates (a Cortex-M by QEMU's "
            "machine name, or an RV32 core on QEMU's virt; see adir/backends/c/cortex_m.py)",
        )
        c_group.add_argument(
            "--c-ram",
            metavar="SIZE",
            help="with --c-board: the RAM budget of the linker script (default 256K); a model "
            "that does not fit fails to link",
        )
        c_group.add_argument(
            "--c-package",
            choices=PACKAGES,
            help="with --emit-c: lay DIR out as a Zephyr module (adds zephyr/module.yml, "
            "CMakeLists.txt and Kconfig) or an Arduino library (library.properties and src/); "
            "see adir/backends/c/packages.py",
        )
        c_group.add_argument(
            "--c-flash",
            metavar="SIZE",
            help="with --c-board: the flash budget of the linker script (default the board's "
            "flash); frozen parameters and constants that do not fit are an error",
        )
        c_group.add_argument(
            "--c-main",
            action="store_true",
            help="with --emit-c: also write <prefix>main.c, a program that trains the model on "
            "dataset files (needs --optimizer and --predict)",
        )

    def target_spec(self, text: str) -> str:
        """`-t`'s argparse type: a malformed or contradictory target spec is a diagnostic
        before anything runs (xDSL would raise its parse error as a traceback)."""

        def error(message: str, column: int | None = None) -> DiagnosticError:
            context = caret_lines(text, column) if column is not None else []
            return DiagnosticError("adir-opt", f"-t {text}: {message}", context)

        try:
            spec = parse_spec(text)
        except ArgSpecParseError as parse_error:
            column, message = spec_syntax_error(parse_error)
            raise error(f"malformed target: {message}", column) from None
        if (repeated := repeated_option(text)) is not None:
            raise error(f"option '{repeated[0]}' is given twice", repeated[1])
        factory = self.available_targets.get(spec.name)
        if factory is not None and spec.parameters:
            try:
                factory().from_spec(spec)  # type: ignore[operator, union-attr]
            except ValueError as bad_value:
                raise error(str(bad_value)) from bad_value
        return text

    def shortcut_passes(self) -> list[str]:
        """The pass specs the shortcut flags ask for, in the canonical order."""
        args = self.args
        wanted: dict[str, tuple[str, str]] = {}  # pass name -> (spec, the flag that wants it)
        if args.optimizer is not None:
            lr = "" if args.lr is None else f" lr={pipeline_float(args.lr)}"
            spec = f"insert-optimizer{{kind={args.optimizer}{lr}}}"
            wanted["insert-optimizer"] = (spec, "--optimizer")
        elif args.lr is not None:
            raise DiagnosticError("adir-opt", "--lr needs --optimizer")
        for name, flag in [
            (
                "autodiff",
                "--autodiff" if args.autodiff else "--optimizer" if args.optimizer else None,
            ),
            (
                "bufferize",
                "--bufferize"
                if args.bufferize
                else "--plan-memory"
                if args.plan_memory
                else "--emit-c"
                if args.emit_c
                else None,
            ),
            (
                "plan-memory",
                "--plan-memory" if args.plan_memory else "--emit-c" if args.emit_c else None,
            ),
            ("derive-predict", "--predict" if args.predict else None),
            ("recompute-activations", "--recompute" if args.recompute else None),
        ]:
            if flag is not None:
                wanted[name] = (name, flag)
        if args.train is not None:
            if "autodiff" not in wanted:
                raise DiagnosticError("adir-opt", "--train needs --autodiff or --optimizer")
            spec = f'apply-update-scheme{{scheme="{args.train}"}}'
            wanted["apply-update-scheme"] = (spec, "--train")
        if args.suggest_update_scheme or args.train == SUGGESTED_SCHEME:
            flag = "--suggest-update-scheme" if args.suggest_update_scheme else "--train=suggested"
            wanted["apply-update-scheme"] = (self.suggest_spec(flag), flag)
        if args.quantize_frozen is not None:
            if "insert-optimizer" not in wanted:
                raise DiagnosticError("adir-opt", "--quantize-frozen needs --optimizer")
            calibration = args.quantize_frozen
            options = [f"calibration={pipeline_string(calibration)}"] if calibration else []
            if args.quantize_level == 2:
                options = ["level=2", *([] if not args.no_qas else ["qas=false"]), *options]
                key = "quantize-frozen-prefix (level 2)"
            else:
                key = "quantize-frozen-prefix"
            spec = f"quantize-frozen-prefix{{{' '.join(options)}}}" if options else ""
            wanted[key] = (spec or "quantize-frozen-prefix", "--quantize-frozen")
            for lowering in ("fuse-expand-depthwise", "in-place-depthwise", "fuse-quantize-conv"):
                wanted[lowering] = (lowering, "--quantize-frozen")
        if args.quantize_level != 1 and args.quantize_frozen is None:
            raise DiagnosticError("adir-opt", "--quantize-level needs --quantize-frozen")
        if args.no_qas and args.quantize_level != 2:
            raise DiagnosticError("adir-opt", "--no-qas needs --quantize-level=2")
        if args.predict_batch is not None and not args.predict:
            raise DiagnosticError("adir-opt", "--predict-batch needs --predict")
        if args.predict:
            batch = 1 if args.predict_batch is None else args.predict_batch
            if batch < 0:
                raise DiagnosticError("adir-opt", f"--predict-batch {batch}: must be 0 or more")
            wanted["derive-predict"] = (f"derive-predict{{batch={batch}}}", "--predict")
        if "autodiff" in wanted and not args.train_frozen_batchnorm:
            wanted["freeze-batchnorm"] = ("freeze-batchnorm", wanted["autodiff"][1])
        elif args.train_frozen_batchnorm and "autodiff" not in wanted:
            raise DiagnosticError(
                "adir-opt", "--train-frozen-batchnorm needs --autodiff or --optimizer"
            )
        if "recompute-activations" in wanted:
            wanted["recompute-activations"] = ("recompute-activations{report=true}", "--recompute")
        # On by default before bufferization: they save memory (and fuse-batchnorm-relu time),
        # the same numbers.
        if "bufferize" in wanted:
            for name in ("fuse-weight-updates", "reorder-updates", "fuse-batchnorm-relu"):
                wanted[name] = (name, wanted["bufferize"][1])
        if "plan-memory" in wanted:
            wanted["select-kernels"] = (self.select_kernels_spec(), wanted["plan-memory"][1])
        elif args.c_kernels is not None or args.c_target is not None:
            flag = "--c-kernels" if args.c_kernels is not None else "--c-target"
            raise DiagnosticError("adir-opt", f"{flag} needs --plan-memory or --emit-c=DIR")
        plan_options = []
        for flag, given, option in (
            ("--memory-report", args.memory_report, "report=true"),
            ("--memory-svg", args.memory_svg, f"svg={pipeline_string(args.memory_svg)}"),
            ("--memory-json", args.memory_json, f"json={pipeline_string(args.memory_json)}"),
        ):
            if given:
                if "plan-memory" not in wanted:
                    raise DiagnosticError("adir-opt", f"{flag} needs --plan-memory")
                plan_options.append(option)
        if args.sram is not None:
            if "plan-memory" not in wanted:
                raise DiagnosticError("adir-opt", "--sram needs --plan-memory or --emit-c=DIR")
            try:
                plan_options.append(f"sram={parse_size(args.sram)}")
            except ValueError as error:
                raise DiagnosticError("adir-opt", f"--sram {args.sram}: {error}") from error
        if plan_options:
            spec = f"plan-memory{{{' '.join(plan_options)}}}"
            wanted["plan-memory"] = (spec, wanted["plan-memory"][1])
        if wanted or args.infer_shapes:
            wanted["infer-shapes"] = ("infer-shapes", "--infer-shapes")
        return [wanted[name][0] for name in SHORTCUT_ORDER if name in wanted]

    def suggest_spec(self, flag: str) -> str:
        """`suggest-update-scheme{...}` compiling its candidates as this command line would."""
        args = self.args
        if args.train not in (None, SUGGESTED_SCHEME):
            raise DiagnosticError(
                "adir-opt", f"{flag}: --train={args.train} names a scheme already"
            )
        if args.optimizer is None or (args.sram is None and args.c_board is None):
            raise DiagnosticError("adir-opt", f"{flag} needs --optimizer and --sram (or --c-board)")
        # Without --sram, the budget is what the board's RAM (--c-ram) leaves the model.
        flag_name, size = ("--sram", args.sram) if args.sram else ("--c-ram", args.c_ram or "256K")
        try:
            sram = parse_size(size) if args.sram else model_ram(parse_size(size))
            options = [f"sram={sram}", f"kind={args.optimizer}"]
        except ValueError as error:
            raise DiagnosticError("adir-opt", f"{flag_name} {size}: {error}") from error
        if args.lr is not None:
            options.append(f"lr={pipeline_float(args.lr)}")
        selection = self.select_kernels_spec().removeprefix("select-kernels")
        options += selection.strip("{}").split()
        if args.train_frozen_batchnorm:
            options.append("train_frozen_batchnorm=true")
        if args.recompute:
            options.append("recompute=true")
        # --quantize-frozen: each candidate is measured as the int8 step it compiles to.
        if args.quantize_frozen is not None:
            options.append(f"quantize_level={args.quantize_level}")
            if args.quantize_frozen:
                options.append(f"calibration={pipeline_string(args.quantize_frozen)}")
            if args.no_qas:
                options.append("qas=false")
        return f"suggest-update-scheme{{{' '.join(options)}}}"

    def select_kernels_spec(self) -> str:
        """`select-kernels{...}` as --c-kernels, --c-target and --c-board ask for it."""
        args = self.args
        target = args.c_target
        if args.c_board is not None:
            board_target = BOARDS[args.c_board].kernel_target
            if target is not None and target != board_target:
                raise DiagnosticError(
                    "adir-opt", f"--c-target {target}: --c-board {args.c_board} is a {board_target}"
                )
            target = board_target
        options = [
            f"{name}={value}"
            for name, value in (("kernels", args.c_kernels), ("target", target))
            if value is not None
        ]
        return f"select-kernels{{{' '.join(options)}}}" if options else "select-kernels"

    def setup_pipeline(self) -> None:
        if self.args.passes and (repeated := repeated_option(self.args.passes)) is not None:
            name, column = repeated
            raise at_pipeline(self.args.passes, column, f"option '{name}' is given twice")
        if self.args.c_main and self.args.emit_c is None:
            raise DiagnosticError("adir-opt", "--c-main needs --emit-c=DIR")
        if self.args.c_package is not None:
            if self.args.emit_c is None:
                raise DiagnosticError("adir-opt", "--c-package needs --emit-c=DIR")
            if self.args.c_board is not None:
                raise DiagnosticError(
                    "adir-opt",
                    f"--c-package={self.args.c_package} builds with its own startup code, "
                    "not --c-board's",
                )
            if self.args.c_package == "arduino" and self.args.c_main:
                raise DiagnosticError(
                    "adir-opt", "--c-package=arduino: a sketch is the program, not --c-main"
                )
        self.c_board_files: dict[str, str] = {}
        self.c_board: Board | None = None
        self.c_budget = HOST
        if self.args.c_ram is not None and self.args.c_board is None:
            raise DiagnosticError("adir-opt", "--c-ram needs --c-board")
        if self.args.c_flash is not None and self.args.c_board is None:
            raise DiagnosticError("adir-opt", "--c-flash needs --c-board")
        if self.args.c_board is not None:
            if self.args.emit_c is None or self.args.c_main:
                raise DiagnosticError(
                    "adir-opt", "--c-board needs --emit-c=DIR and a main of your own, not --c-main"
                )
            ram = self.args.c_ram or "256K"
            board = self.c_board = BOARDS[self.args.c_board]
            flash = None
            if self.args.c_flash is not None:
                try:
                    flash = parse_size(self.args.c_flash)
                    if flash > board.flash_bytes:
                        raise ValueError(
                            f"{board.name} has {board.flash_bytes} bytes of flash, not {flash}"
                        )
                except ValueError as error:
                    message = f"--c-flash {self.args.c_flash}: {error}"
                    raise DiagnosticError("adir-opt", message) from error
            try:
                self.c_board_files = board_files(
                    board, parse_size(ram), self.args.c_kernels or "tuned", flash_bytes=flash
                )
                self.c_budget = static_budget(board, parse_size(ram), flash)
            except ValueError as error:
                raise DiagnosticError("adir-opt", f"--c-ram {ram}: {error}") from error
        if self.args.c_prefix is None:
            self.args.c_prefix = default_prefix(self.args.input_file)
        if self.args.c_prefix and not C_IDENTIFIER.fullmatch(self.args.c_prefix):
            raise DiagnosticError(
                "adir-opt", f"--c-prefix {self.args.c_prefix!r} is not the start of a C identifier"
            )
        specs = self.shortcut_passes()
        if self.args.passes:
            specs.append(self.args.passes)
        self.args.passes = ",".join(specs)
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as error:
            raise pipeline_error(self.args.passes, error, self.available_passes) from error
        self.timer = StageTimer()
        self.pipeline = PassPipeline(self.pipeline.passes, self.between_passes)

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.pipeline.passes:  # every pass reads a function as its one block
            check_single_blocks(prog)
        super().apply_passes(prog)

    def between_passes(
        self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None
    ) -> None:
        """xDSL's callback (`--print-between-passes`), with the verifier timed apart from the
        pass it checks. The verifier checks the input and the result; between passes only with
        `--verify-each` (it costs as much as most passes, and the passes are tested to keep the
        IR valid)."""
        if previous is not None:
            self.timer.stop(previous.name)
        at_an_end = previous is None or next_pass is None
        if not self.args.disable_verify and (at_an_end or self.args.verify_each):
            with self.timer.stage("verify"):
                module.verify()
        if previous is not None and next_pass is not None and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        self.timer.start()

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        text = decode(chunk.read(), self.get_input_name(), start_offset)
        parser = LocatedParser(self.ctx, text, self.get_input_name(), start_offset)
        return parser.parse_module(not self.args.no_implicit_module)

    def run(self) -> None:
        """Parse, run the pipeline and print each chunk; write the output only on success."""
        chunks, _ = self.prepare_input()
        source_lines = (
            b"".join(chunk.getvalue() for chunk, _ in chunks).decode("utf-8", "replace").split("\n")
        )
        outputs: list[str] = []
        c_output: dict[str, str] | None = None
        if self.args.emit_c is not None and len(chunks) != 1:
            raise DiagnosticError("adir-opt", "--emit-c takes one module, not a split input")
        for index, (chunk, offset) in enumerate(chunks):
            if index > 0:
                outputs.append("// -----\n")
            module: ModuleOp | None = None
            try:
                with collected_warnings(self.get_input_name(), source_lines):
                    with self.timer.stage("parse"):
                        module = self.parse_chunk(chunk, "mlir", offset)
                    if module is not None:
                        self.apply_passes(module)
                    if module is not None and self.args.emit_c is not None:
                        with self.timer.stage("C backend"):
                            prefix = self.args.c_prefix
                            model = print_model(module, prefix, self.c_budget)
                            c_output = c_files(model)
                            main = f"{prefix}main.c" if self.args.c_main else None
                            c_output.update(cmake_files(model, main, self.c_board))
                            if main is not None:
                                c_output[main] = harness_source(module, prefix)
                            c_output.update(self.c_board_files)
                            if self.args.c_package is not None:
                                c_output = package_files(self.args.c_package, prefix, c_output)
                if module is not None:
                    with self.timer.stage(f"output (-t {self.args.target})"):
                        outputs.append(self.output_resulting_program(module))
            except ParseError as error:
                error.span = dataclasses.replace(error.span, line_offset=offset)
                if not self.args.parsing_diagnostics:
                    raise format_parse_error(error) from error
                outputs.append(f"{format_parse_error(error)}\n")
            except DiagnosticException as error:
                located = locate_failure(error, module, self.get_input_name(), source_lines)
                if not self.args.verify_diagnostics:
                    raise located from error
                outputs.append(f"{located}\n")  # in place, so chunks keep their order
            finally:
                chunk.close()
        text = "".join(outputs)
        if self.args.time_passes:
            self.timer.report()
        if c_output is not None:
            write_c_output(self.args.emit_c, c_output)
            if self.args.output_file is not None:
                write_file(self.args.output_file, text)
        else:
            write_file(self.args.output_file or STDOUT, text)

    def prepare_input(self) -> tuple[list[tuple[BytesIO, int]], str]:  # type: ignore[override]
        try:
            chunks, extension = super().prepare_input()
        except OSError as error:
            name = self.args.input_file
            raise DiagnosticError(name, f"cannot read the input: {error.strerror}") from error
        except ValueError as error:  # an unknown file extension
            raise DiagnosticError(self.get_input_name(), str(error)) from error
        # Read now, so a missing or unreadable file is reported before anything runs.
        return [(BytesIO(chunk.read()), offset) for chunk, offset in chunks], extension


@contextlib.contextmanager
def collected_warnings(input_name: str, source_lines: Sequence[str]) -> Iterator[None]:
    """Print the `OpWarning`s the passes raise as `file:line:col: warning: ...` on stderr,
    each once, after the chunk (also when it fails)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OpWarning)
        try:
            yield
        finally:
            seen = set()
            for record in caught:
                warning = record.message
                if not isinstance(warning, OpWarning):
                    warnings.showwarning(
                        record.message, record.category, record.filename, record.lineno
                    )
                    continue
                location, context = op_location(warning.op, input_name, source_lines)
                text = "\n".join([f"{location}: warning: {warning.message}", *context])
                if text not in seen:
                    seen.add(text)
                    print(text, file=sys.stderr)


def write_c_output(directory: str, files: dict[str, str]) -> None:
    """Write the C files into `directory`, all or none, and name the existing files whose
    content this replaced (an older build of the model, or a file of the user's) and those of
    the previous emit that this one no longer writes: removed, or kept when edited since."""
    update = write_directory(directory, files)
    notes = [
        (name, "replaced the existing file (its content differed)") for name in update.replaced
    ]
    notes += [
        (name, "removed: the previous emit wrote it, this one does not") for name in update.removed
    ]
    notes += [
        (
            name,
            "kept: the previous emit wrote it and this one does not, but it was edited since; "
            "a build that compiles every file of the directory still takes it",
        )
        for name in update.kept
    ]
    for name, note in notes:
        print(f"{os.path.join(directory, name)}: note: {note}", file=sys.stderr)


def learning_rate(text: str) -> float:
    """`--lr`'s argparse type. nan, inf and what overflows to inf (1e400) are refused here, as
    the pipeline syntax that carries the rate to insert-optimizer has no spelling for them; a
    negative rate too (insert-optimizer refuses it as torch.optim does). Either error would
    otherwise point into a pipeline the user did not write."""
    try:
        value = float(text)
    except ValueError:
        raise DiagnosticError("adir-opt", f"--lr {text}: not a number") from None
    if not math.isfinite(value):
        raise DiagnosticError("adir-opt", f"--lr {text}: the learning rate must be finite")
    if value < 0:  # as torch.optim refuses it ("Invalid learning rate")
        raise DiagnosticError("adir-opt", f"--lr {text}: the learning rate must not be negative")
    return value


def pipeline_float(value: float) -> str:
    """`value` as xDSL's pipeline syntax reads it back exactly: its numbers need a point
    before an exponent (`1e-05` would lex as a name, `1.0e-05` is a number)."""
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def pipeline_string(value: str | None) -> str:
    """`value` as a string literal of xDSL's pipeline syntax, which reads it back unescaped."""
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return '"' + "".join(escapes.get(c, c) for c in value or "") + '"'


def _command_line_error(message: str) -> NoReturn:
    raise DiagnosticError("adir-opt", message)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    with no_cycle_collection():
        return report_errors(
            "adir-opt",
            lambda: AdirOptMain(description="adir's modular optimizer driver", args=args).run(),
            debug="--debug" in args,
        )


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Run without Python's cycle collector. xDSL's IR is a graph of reference cycles (ops,
    blocks, uses) that lives until the run ends, and the collector rescans all of it every few
    hundred allocations: a third of the run time of a 10,000-op model. What it could free is the
    ops the passes erase, about 15% more peak memory at that size."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def cli() -> int:
    """The `adir-opt` command: `main`, then the IR is left to the operating system. Python's
    shutdown would otherwise run one last cycle collection over all of it (1.5 s of a
    10,000-op model's 10); frozen objects are skipped."""
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(cli())
