// Bad options and flags, a second selection after CMSIS-NN's scratch was added, and a selection that needs
// scratch after the plan are located errors (exit code 1).
// RUN: not adir-opt %s -p 'bufferize,select-kernels{target=m55}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis}' 2>&1 | filecheck %s --check-prefix=KERNELS
// RUN: not adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn target=cortex-m55},select-kernels' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not adir-opt %s -p 'bufferize,plan-memory,select-kernels{kernels=cmsis-nn target=cortex-m55}' 2>&1 | filecheck %s --check-prefix=PLANNED
// RUN: not adir-opt %s --plan-memory --c-target=host --c-board=mps2-an386 --emit-c=%t 2>&1 | filecheck %s --check-prefix=BOARD
// RUN: not adir-opt %s --c-kernels=cmsis-nn 2>&1 | filecheck %s --check-prefix=UNPLANNED
// TARGET: error: select-kernels: target='m55' is not one of host, x86-avx2, x86-avx512, cortex-m3, cortex-m4f, cortex-m7, cortex-m55, rv32imac, rv32imafc
// KERNELS: error: select-kernels: kernels='cmsis' is not one of reference, tuned, cmsis-dsp, cmsis-nn
// TWICE: error: select-kernels: the kernels were selected already, with scratch buffers
// PLANNED: errors.mlir:16:3: error: select-kernels: arm_fully_connected_s8 needs 8 bytes of scratch, which only a plan made after this pass has: run select-kernels before plan-memory
// BOARD: adir-opt: error: --c-target host: --c-board mps2-an386 is a cortex-m4f
// UNPLANNED: adir-opt: error: --c-kernels needs --plan-memory or --emit-c=DIR
func.func @f(%x: tensor<1x4xi8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) -> tensor<1x2xi8> {
  %y = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return %y : tensor<1x2xi8>
}
