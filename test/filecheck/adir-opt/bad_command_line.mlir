// Bad flags and missing files are errors with exit code 1, not tracebacks.
// RUN: not adir-opt %s --frobnicate 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not adir-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not adir-opt %s --lr 0.1 2>&1 | filecheck %s --check-prefix=LR
// RUN: not adir-opt %s -t nosuchtarget 2>&1 | filecheck %s --check-prefix=TARGET
// nan, inf and 1e400 were "<pass-pipeline>:1:1: ... Incompatible types", in a pipeline the
// user did not write; 1e-5 was the same error, although it is a fine learning rate.
// RUN: not adir-opt %s --optimizer=sgd --lr=nan 2>&1 | filecheck %s --check-prefix=NAN
// RUN: not adir-opt %s --optimizer=sgd --lr=1e400 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: adir-opt %S/../../../examples/mnist_mlp.mlir --optimizer=sgd --lr=1e-5 | filecheck %s --check-prefix=SMALL

func.func @f() {
  func.return
}
// FLAG: adir-opt: error: unrecognized arguments: --frobnicate
// MISSING: bad_command_line.mlir.missing: error: cannot read the input: No such file or directory
// LR: adir-opt: error: --lr needs --optimizer
// TARGET: adir-opt: error: argument -t/--target: invalid choice: 'nosuchtarget' (choose from mlir, c)
// NAN: adir-opt: error: --lr nan: the learning rate must be finite
// HUGE: adir-opt: error: --lr 1e400: the learning rate must be finite
// SMALL: adir.constant dense<1.000000e-05> : tensor<f32>
