// Bad options and a module lowered twice are located errors (exit code 1).
// RUN: not adir-opt %s -p 'bufferize,lower-to-cmsis-nn{target=m55}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not adir-opt %s -p 'bufferize,lower-to-cmsis-nn,lower-to-cmsis-nn' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not adir-opt %s -p 'bufferize,plan-memory' -t 'c{kernels="cmsis-nn"}' 2>&1 | filecheck %s --check-prefix=UNLOWERED
// TARGET: error: lower-to-cmsis-nn: target='m55' is not one of scalar, dsp, mve
// TWICE: error: lower-to-cmsis-nn: the module was lowered already
// UNLOWERED: error: C backend: kernels="cmsis-nn" prints what lower-to-cmsis-nn chose; run it after bufferize and before plan-memory
func.func @f(%x: tensor<1x4xi8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) -> tensor<1x2xi8> {
  %y = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return %y : tensor<1x2xi8>
}
