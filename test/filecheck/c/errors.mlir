// The C backend's diagnostics: exit code 1, located where there is an op to point at.
// RUN: not adir-opt -t c %s 2>&1 | filecheck %s --check-prefix=NOPLAN
// RUN: not adir-opt --plan-memory -t 'c{bogus=1}' %s 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not adir-opt --plan-memory -t 'c{file="both"}' %s 2>&1 | filecheck %s --check-prefix=FILE
// RUN: not adir-opt --emit-c=%t --c-prefix=9lives %s 2>&1 | filecheck %s --check-prefix=PREFIX
// RUN: not adir-opt --c-main %s 2>&1 | filecheck %s --check-prefix=MAIN
// RUN: not adir-opt --emit-c=%t --c-main %s 2>&1 | filecheck %s --check-prefix=HARNESS

// NOPLAN: errors.mlir: error: C backend: the module has no memory plan; run the C target after `plan-memory`
// OPTION: adir-opt: error: -t c{bogus=1}: Provided arguments ["bogus"] not found in expected arguments ["prefix", "file"]
// FILE: adir-opt: error: -t c{file="both"}: C target: file='both' is not one of source, header
// PREFIX: adir-opt: error: --c-prefix '9lives' is not the start of a C identifier
// MAIN: adir-opt: error: --c-main needs --emit-c=DIR
// HARNESS: errors.mlir: error: C harness: the module has no @train_step (add --optimizer=...)

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = adir.relu %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
