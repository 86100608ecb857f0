// infer-shapes fills the unknown result shapes of conv_and_pool ops from their operands and
// properties: out = (in + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// LeNet-5's feature extractor: 28 -conv5-> 24 -pool2-> 12 -conv5-> 8 -pool2-> 4.
// CHECK-LABEL: func.func @lenet_features(%x: tensor<1x1x28x28xf32>, %w1: tensor<6x1x5x5xf32>, %b1: tensor<6xf32>, %w2: tensor<16x6x5x5xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    %c1 = adir.conv2d %x, %w1, %b1 : tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<1x6x24x24xf32>
// CHECK-NEXT:    %p1 = adir.maxpool2d %c1 {kernel_size = array<i64: 2, 2>} : tensor<1x6x24x24xf32> -> tensor<1x6x12x12xf32>
// CHECK-NEXT:    %c2 = adir.conv2d %p1, %w2 : tensor<1x6x12x12xf32>, tensor<16x6x5x5xf32> -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    %p2 = adir.maxpool2d %c2 {kernel_size = array<i64: 2, 2>} : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    func.return %p2 : tensor<1x16x4x4xf32>
func.func @lenet_features(%x: tensor<1x1x28x28xf32>, %w1: tensor<6x1x5x5xf32>, %b1: tensor<6xf32>, %w2: tensor<16x6x5x5xf32>) -> tensor<*xf32> {
  %c1 = adir.conv2d %x, %w1, %b1 : tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<*xf32>
  %p1 = adir.maxpool2d %c1 {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  %c2 = adir.conv2d %p1, %w2 : tensor<*xf32>, tensor<16x6x5x5xf32> -> tensor<*xf32>
  %p2 = adir.maxpool2d %c2 {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  func.return %p2 : tensor<*xf32>
}

// -----

// Stride, asymmetric padding, dilation and groups; odd sizes round down.
// CHECK-LABEL: func.func @window_geometry
// CHECK-NEXT:    %0 = adir.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<2x8x5x5xf32>
// CHECK-NEXT:    %1 = adir.conv2d %x, %w {stride = array<i64: 2, 3>, padding = array<i64: 0, 1, 2, 0>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<2x8x4x3xf32>
// CHECK-NEXT:    %2 = adir.conv2d %x, %w {dilation = array<i64: 2, 3>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<2x8x5x3xf32>
// CHECK-NEXT:    %3 = adir.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x9x9xf32>
// CHECK-NEXT:    %4 = adir.avgpool2d %3 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
// CHECK-NEXT:    %5 = adir.global_avgpool2d %4 : tensor<2x4x5x5xf32> -> tensor<2x4x1x1xf32>
func.func @window_geometry(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %dw: tensor<4x1x3x3xf32>) -> tensor<*xf32> {
  %0 = adir.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<*xf32>
  %1 = adir.conv2d %x, %w {stride = array<i64: 2, 3>, padding = array<i64: 0, 1, 2, 0>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<*xf32>
  %2 = adir.conv2d %x, %w {dilation = array<i64: 2, 3>} : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32> -> tensor<*xf32>
  %3 = adir.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32> -> tensor<*xf32>
  %4 = adir.avgpool2d %3 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<*xf32>
  %5 = adir.global_avgpool2d %4 : tensor<*xf32>
  func.return %5 : tensor<*xf32>
}

// -----

// The gradient ops' results: the forward input's shape (from input_size and the channels
// of weight x groups), the weight's (from kernel_size).
// CHECK-LABEL: func.func @gradients
// CHECK-NEXT:    %0 = adir.conv2d_grad_input %dy, %w {stride = array<i64: 2, 2>, groups = 2 : i64, input_size = array<i64: 8, 9>} : tensor<2x6x3x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x9xf32>
// CHECK-NEXT:    %1 = adir.conv2d_grad_weight %x, %dy {stride = array<i64: 2, 2>, groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<2x4x8x9xf32>, tensor<2x6x3x4xf32> -> tensor<6x2x3x3xf32>
// CHECK-NEXT:    %2 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x9xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x9xf32>
// CHECK-NEXT:    %3 = adir.avgpool2d_grad %p {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 9>} : tensor<2x4x4x4xf32> -> tensor<2x4x8x9xf32>
func.func @gradients(%x: tensor<2x4x8x9xf32>, %w: tensor<6x2x3x3xf32>, %dy: tensor<2x6x3x4xf32>, %p: tensor<2x4x4x4xf32>) -> tensor<*xf32> {
  %0 = adir.conv2d_grad_input %dy, %w {stride = array<i64: 2, 2>, groups = 2 : i64, input_size = array<i64: 8, 9>} : tensor<2x6x3x4xf32>, tensor<6x2x3x3xf32> -> tensor<*xf32>
  %1 = adir.conv2d_grad_weight %x, %dy {stride = array<i64: 2, 2>, groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<2x4x8x9xf32>, tensor<2x6x3x4xf32> -> tensor<*xf32>
  %2 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x9xf32>, tensor<2x4x4x4xf32> -> tensor<*xf32>
  %3 = adir.avgpool2d_grad %p {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 9>} : tensor<2x4x4x4xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// Unknown dims stay unknown: a `?` batch passes through, a `?` height gives a `?` output
// height, and the output channels come from the weight (or the bias) when the input is
// unranked.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    %0 = adir.conv2d %x, %w : tensor<?x3x?x16xf32>, tensor<8x3x3x3xf32> -> tensor<?x8x?x14xf32>
// CHECK-NEXT:    %1 = adir.maxpool2d %0 {kernel_size = array<i64: 2, 2>} : tensor<?x8x?x14xf32> -> tensor<?x8x?x7xf32>
// CHECK-NEXT:    %2 = adir.conv2d %u, %v, %b : tensor<*xf32>, tensor<?x3x3x3xf32>, tensor<5xf32> -> tensor<?x5x?x?xf32>
func.func @dynamic(%x: tensor<?x3x?x16xf32>, %w: tensor<8x3x3x3xf32>, %u: tensor<*xf32>, %v: tensor<?x3x3x3xf32>, %b: tensor<5xf32>) -> tensor<*xf32> {
  %0 = adir.conv2d %x, %w : tensor<?x3x?x16xf32>, tensor<8x3x3x3xf32> -> tensor<*xf32>
  %1 = adir.maxpool2d %0 {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  %2 = adir.conv2d %u, %v, %b : tensor<*xf32>, tensor<?x3x3x3xf32>, tensor<5xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// conv1d on [N, C, L]: 128 -conv7, padding 3-> 128 -conv5, stride 2, dilation 2-> (128 - 9) // 2 + 1 = 60;
// unknown dims stay unknown.
// CHECK-LABEL: func.func @conv1d(%x: tensor<2x3x128xf32>, %w: tensor<16x3x7xf32>, %w2: tensor<8x16x5xf32>, %b: tensor<8xf32>, %u: tensor<?x3x?xf32>) -> tensor<2x8x60xf32>
// CHECK-NEXT:    %0 = adir.conv1d %x, %w {padding = array<i64: 3, 3>} : tensor<2x3x128xf32>, tensor<16x3x7xf32> -> tensor<2x16x128xf32>
// CHECK-NEXT:    %1 = adir.conv1d %0, %w2, %b {stride = array<i64: 2>, dilation = array<i64: 2>} : tensor<2x16x128xf32>, tensor<8x16x5xf32>, tensor<8xf32> -> tensor<2x8x60xf32>
// CHECK-NEXT:    %2 = adir.conv1d %u, %w : tensor<?x3x?xf32>, tensor<16x3x7xf32> -> tensor<?x16x?xf32>
func.func @conv1d(%x: tensor<2x3x128xf32>, %w: tensor<16x3x7xf32>, %w2: tensor<8x16x5xf32>, %b: tensor<8xf32>, %u: tensor<?x3x?xf32>) -> tensor<*xf32> {
  %0 = adir.conv1d %x, %w {padding = array<i64: 3, 3>} : tensor<2x3x128xf32>, tensor<16x3x7xf32> -> tensor<*xf32>
  %1 = adir.conv1d %0, %w2, %b {stride = array<i64: 2>, dilation = array<i64: 2>} : tensor<*xf32>, tensor<8x16x5xf32>, tensor<8xf32> -> tensor<*xf32>
  %2 = adir.conv1d %u, %w : tensor<?x3x?xf32>, tensor<16x3x7xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
