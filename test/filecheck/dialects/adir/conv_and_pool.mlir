// Every conv_and_pool op prints in its custom form and survives a trip through the generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// conv2d with and without its optional bias; properties equal to their defaults (stride 1,
// no padding, dilation 1, groups 1) are left out even when written.
// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x6x6xf32> {
  // CHECK-NEXT: %0 = adir.conv2d %x, %w, %b : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %0 = adir.conv2d %x, %w, %b : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  // CHECK-NEXT: %1 = adir.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %1 = adir.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK-NEXT: %2 = adir.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = adir.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
  // Asymmetric padding (top, bottom, left, right) and dilation: (8 + 0 + 2 - 5) + 1 = 6 rows,
  // (8 + 1 + 0 - 5) + 1 = 5 columns.
  // CHECK-NEXT: %3 = adir.conv2d %x, %w {padding = array<i64: 0, 2, 1, 0>, dilation = array<i64: 2, 2>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x5xf32>
  %3 = adir.conv2d %x, %w {padding = array<i64: 0, 2, 1, 0>, dilation = array<i64: 2, 2>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x5xf32>
  func.return %0 : tensor<2x4x6x6xf32>
}

// -----

// Grouped and depthwise convolutions: the weight has C / groups input channels.
// CHECK-LABEL: func.func @groups
func.func @groups(%x: tensor<1x4x5x5xf32>, %w2: tensor<6x2x3x3xf32>, %dw: tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32> {
  // CHECK-NEXT: %0 = adir.conv2d %x, %w2 {groups = 2 : i64} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  %0 = adir.conv2d %x, %w2 {groups = 2 : i64} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  // CHECK-NEXT: %1 = adir.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<1x4x5x5xf32>, tensor<8x1x3x3xf32> -> tensor<1x8x5x5xf32>
  %1 = adir.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<1x4x5x5xf32>, tensor<8x1x3x3xf32> -> tensor<1x8x5x5xf32>
  func.return %1 : tensor<1x8x5x5xf32>
}

// -----

// Pools: stride defaults to the kernel size and prints only when written; count_include_pad
// defaults to true.
// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<2x3x8x7xf32>) -> tensor<2x3x1x1xf32> {
  // CHECK-NEXT: %0 = adir.maxpool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x3xf32>
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x3xf32>
  // CHECK-NEXT: %1 = adir.maxpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x4xf32>
  %1 = adir.maxpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: %2 = adir.maxpool2d %x {kernel_size = array<i64: 2, 3>, stride = array<i64: 2, 3>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x2xf32>
  %2 = adir.maxpool2d %x {kernel_size = array<i64: 2, 3>, stride = array<i64: 2, 3>} : tensor<2x3x8x7xf32> -> tensor<2x3x4x2xf32>
  // CHECK-NEXT: %3 = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x3x8x7xf32>
  %3 = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<2x3x8x7xf32>
  // CHECK-NEXT: %4 = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 1, 1, 0>, count_include_pad = false} : tensor<2x3x8x7xf32> -> tensor<2x3x7x6xf32>
  %4 = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 1, 1, 0>, count_include_pad = false} : tensor<2x3x8x7xf32> -> tensor<2x3x7x6xf32>
  // CHECK-NEXT: %5 = adir.global_avgpool2d %x : tensor<2x3x8x7xf32> -> tensor<2x3x1x1xf32>
  %5 = adir.global_avgpool2d %x : tensor<2x3x8x7xf32> -> tensor<2x3x1x1xf32>
  func.return %5 : tensor<2x3x1x1xf32>
}

// -----

// The gradient ops carry the forward op's properties, plus the forward shape their operands
// do not determine: the input's spatial size, or the kernel's.
// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %dy: tensor<2x6x4x4xf32>, %p: tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32> {
  // CHECK-NEXT: %0 = adir.conv2d_grad_input %dy, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, groups = 2 : i64, input_size = array<i64: 8, 8>} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  %0 = adir.conv2d_grad_input %dy, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, groups = 2 : i64, input_size = array<i64: 8, 8>} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %1 = adir.conv2d_grad_weight %x, %dy {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<2x4x8x8xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x3xf32>
  %1 = adir.conv2d_grad_weight %x, %dy {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<2x4x8x8xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x3xf32>
  // CHECK-NEXT: %2 = adir.conv2d_grad_weight %x, %x {dilation = array<i64: 2, 2>, kernel_size = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<4x4x1x1xf32>
  %2 = adir.conv2d_grad_weight %x, %x {dilation = array<i64: 2, 2>, kernel_size = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<4x4x1x1xf32>
  // CHECK-NEXT: %3 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  %3 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %4 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  %4 = adir.maxpool2d_grad %x, %p {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %5 = adir.avgpool2d_grad %p {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 9>} : tensor<2x4x4x4xf32> -> tensor<2x4x8x9xf32>
  %5 = adir.avgpool2d_grad %p {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 9>, count_include_pad = true} : tensor<2x4x4x4xf32> -> tensor<2x4x8x9xf32>
  // CHECK-NEXT: %6 = adir.avgpool2d_grad %p {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_size = array<i64: 7, 7>} : tensor<2x4x4x4xf32> -> tensor<2x4x7x7xf32>
  %6 = adir.avgpool2d_grad %p {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_size = array<i64: 7, 7>} : tensor<2x4x4x4xf32> -> tensor<2x4x7x7xf32>
  func.return %0 : tensor<2x4x8x8xf32>
}

// -----

// Unknown dims are legal before infer-shapes; what is known is checked.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x3x?x8xf32>, %w: tensor<4x?x3x3xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK-NEXT: %0 = adir.conv2d %x, %w : tensor<?x3x?x8xf32>, tensor<4x?x3x3xf32> -> tensor<?x4x?x6xf32>
  %0 = adir.conv2d %x, %w : tensor<?x3x?x8xf32>, tensor<4x?x3x3xf32> -> tensor<?x4x?x6xf32>
  // CHECK-NEXT: %1 = adir.conv2d %u, %u : tensor<*xf32>
  %1 = adir.conv2d %u, %u : tensor<*xf32>
  // CHECK-NEXT: %2 = adir.maxpool2d %u {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  %2 = adir.maxpool2d %u {kernel_size = array<i64: 2, 2>} : tensor<*xf32>
  // CHECK-NEXT: %3 = adir.global_avgpool2d %x : tensor<?x3x?x8xf32> -> tensor<?x3x1x1xf32>
  %3 = adir.global_avgpool2d %x : tensor<?x3x?x8xf32> -> tensor<?x3x1x1xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// conv1d (on [N, C, L], padding (left, right); conv2d of height 1) and its two gradient ops;
// properties equal to their defaults are not printed.
// CHECK-LABEL: func.func @conv1d
func.func @conv1d(%x: tensor<2x4x10xf32>, %w: tensor<6x2x3xf32>, %b: tensor<6xf32>, %dy: tensor<2x6x5xf32>) -> tensor<6x2x3xf32> {
  // CHECK-NEXT: %0 = adir.conv1d %x, %w, %b {padding = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32>, tensor<6xf32> -> tensor<2x6x10xf32>
  %0 = adir.conv1d %x, %w, %b {padding = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32>, tensor<6xf32> -> tensor<2x6x10xf32>
  // CHECK-NEXT: %1 = adir.conv1d %x, %w {groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x8xf32>
  %1 = adir.conv1d %x, %w {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x8xf32>
  // CHECK-NEXT: %2 = adir.conv1d %x, %w {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x5xf32>
  %2 = adir.conv1d %x, %w {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x5xf32>
  // CHECK-NEXT: %3 = adir.conv1d_grad_input %dy, %w {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64, input_size = array<i64: 10>} : tensor<2x6x5xf32>, tensor<6x2x3xf32> -> tensor<2x4x10xf32>
  %3 = adir.conv1d_grad_input %dy, %w {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64, input_size = array<i64: 10>} : tensor<2x6x5xf32>, tensor<6x2x3xf32> -> tensor<2x4x10xf32>
  // CHECK-NEXT: %4 = adir.conv1d_grad_weight %x, %dy {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64, kernel_size = array<i64: 3>} : tensor<2x4x10xf32>, tensor<2x6x5xf32> -> tensor<6x2x3xf32>
  %4 = adir.conv1d_grad_weight %x, %dy {stride = array<i64: 2>, padding = array<i64: 2, 1>, dilation = array<i64: 2>, groups = 2 : i64, kernel_size = array<i64: 3>} : tensor<2x4x10xf32>, tensor<2x6x5xf32> -> tensor<6x2x3xf32>
  // CHECK-NEXT: func.return %4 : tensor<6x2x3xf32>
  func.return %4 : tensor<6x2x3xf32>
}
