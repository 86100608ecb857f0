// A function with no body is a located error before any pass runs: derive-predict read its
// (missing) block and crashed (an internal error, exit code 2, found by the fuzz suite).
// Printing the module, with no pass, still works.
// RUN: not adir-opt %s --predict --optimizer=sgd --plan-memory -t c 2>&1 | filecheck %s
// RUN: adir-opt %s | filecheck %s --check-prefix=PRINT

func.func @loss(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.loss}
// CHECK: declaration.mlir:7:1: error: @loss is a declaration (it has no body); adir compiles functions with a body
// PRINT: func.func @loss(tensor<2xf32>) -> tensor<f32> attributes {adir.loss}
