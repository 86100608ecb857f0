// A conv2d whose channels only turn out not to match once infer-shapes knows the shape of its
// input is an error at the conv2d.
// RUN: not adir-opt %s -p infer-shapes 2>&1 | filecheck %s

// %p has the 6 channels of the first conv's output; the second conv's weight expects 3.
func.func @late_mismatch(%x: tensor<1x1x28x28xf32>, %w1: tensor<6x1x5x5xf32>, %w2: tensor<16x3x5x5xf32>) -> tensor<*xf32> {
  %c = adir.conv2d %x, %w1 : tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32> -> tensor<*xf32>
  %p = adir.maxpool2d %c {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  %y = adir.conv2d %p, %w2 : tensor<*xf32>, tensor<16x3x5x5xf32> -> tensor<*xf32>
  func.return %y : tensor<*xf32>
}
// CHECK: conv_mismatch_found_late.mlir:9:3: error: adir.conv2d: input channels 6 and weight channels 3 (x groups 1) do not match
