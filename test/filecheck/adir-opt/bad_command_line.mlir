// Bad flags and missing files are errors with exit code 1, not tracebacks.
// RUN: not adir-opt %s --frobnicate 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not adir-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not adir-opt %s --lr 0.1 2>&1 | filecheck %s --check-prefix=LR
// RUN: not adir-opt %s -t nosuchtarget 2>&1 | filecheck %s --check-prefix=TARGET

func.func @f() {
  func.return
}
// FLAG: adir-opt: error: unrecognized arguments: --frobnicate
// MISSING: bad_command_line.mlir.missing: error: cannot read the input: No such file or directory
// LR: adir-opt: error: --lr needs --optimizer
// TARGET: adir-opt: error: argument -t/--target: invalid choice: 'nosuchtarget' (choose from mlir, c)
