// The static data of the C (arena, parameters and optimizer state, frozen parameters, constant
// tables and initial values) must fit where the build keeps it, else an error at the op that holds the most, exit
// code 1. On a host that is 2^31 - 1 bytes (x86-64's default code model reaches static data
// with 32-bit displacements: more used to fail at link time, "relocation truncated to fit").
// RUN: not adir-opt --plan-memory -t c %s 2>&1 | filecheck %s
// A parameter of 2^42 elements (16 TiB) used to print `static float w[4398046511104];`.
// RUN: sed 's/600000000/4398046511104/g' %s | not adir-opt --plan-memory -t c 2>&1 | filecheck %s --check-prefix=HUGE
// Half of it fits.
// RUN: sed 's/600000000/300000000/g' %s | adir-opt --plan-memory -t c | filecheck %s --check-prefix=FITS
// With a board, its RAM budget less stack and heap: the seed MLP's 101,632 bytes of weights
// do not fit 64K, and nothing is written.
// RUN: rm -rf %t && not adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-ram=64K %S/../../../examples/mnist_mlp.mlir 2>&1 | filecheck %s --check-prefix=BOARD
// RUN: not ls %t

adir.param @w : tensor<600000000xf32> = #adir.zeros
adir.param @b : tensor<4xf32> = #adir.zeros

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = adir.load @b : tensor<4xf32>
  %y = adir.add %x, %b : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: static_data_limit.mlir:15:1: error: C backend: the model needs 2400000032 bytes of static data (2.2 GiB), more than the 2147483647 (2.0 GiB) of a host build's static data (arena 16, parameters and optimizer state 0, frozen parameters, constant tables and initial values 2400000016); this op holds 2400000000 of them
// HUGE: stdin:15:1: error: C backend: the parameter @w (tensor<4398046511104xf32>) has 4398046511104 elements; the C kernels take sizes as int32_t, at most 2147483647
// No function writes @w, so it is a frozen parameter, a constant (adir/param_storage.py).
// FITS: static const float w[300000000] = {0.0f};
// BOARD: mnist_mlp.mlir:12:1: error: C backend: the model needs 101952 bytes of RAM (99.6 KiB), more than the 45056 (44.0 KiB) of RAM that --c-ram=65536 leaves after the stack and heap
