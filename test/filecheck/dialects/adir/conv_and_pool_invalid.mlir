// Every verifier rule of the conv_and_pool family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @conv2d_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:5:3: error: adir.conv2d: result type tensor<1x4x8x8xf32> does not match the type tensor<1x4x6x6xf32> implied by its operands and properties

// -----

func.func @conv2d_int_input(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w : tensor<1x3x8x8xi32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:13:3: error: adir.conv2d: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @conv2d_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:21:3: error: adir.conv2d: operand input must have rank 4, got rank 3 (3x8x8)

// -----

func.func @conv2d_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x27xf32>) {
  %0 = adir.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x27xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:29:3: error: adir.conv2d: operand weight must have rank 4, got rank 2 (4x27)

// -----

func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  %0 = adir.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:37:3: error: adir.conv2d: operand bias must have rank 1, got rank 2 (1x4)

// -----

func.func @conv2d_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = adir.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:45:3: error: adir.conv2d: input channels 3 and weight channels 4 (x groups 1) do not match

// -----

func.func @conv2d_grouped_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %0 = adir.conv2d %x, %w {groups = 2 : i64} : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:53:3: error: adir.conv2d: input channels 4 and weight channels 4 (x groups 2) do not match

// -----

// With the weight's channels unknown, the input's must still divide into the groups.
func.func @conv2d_input_channels_not_divisible(%x: tensor<1x3x8x8xf32>, %w: tensor<4x?x3x3xf32>) {
  %0 = adir.conv2d %x, %w {groups = 2 : i64} : tensor<1x3x8x8xf32>, tensor<4x?x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:62:3: error: adir.conv2d: input channels 3 are not divisible by groups 2

// -----

func.func @conv2d_output_channels_not_divisible(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>) {
  %0 = adir.conv2d %x, %w {groups = 2 : i64} : tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:70:3: error: adir.conv2d: output channels 5 of operand weight are not divisible by groups 2

// -----

func.func @conv2d_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  %0 = adir.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:78:3: error: adir.conv2d: operand bias has 5 entries but operand weight has 4 output channels

// -----

func.func @conv2d_groups_not_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {groups = 0 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:86:3: error: adir.conv2d: groups must be positive, got 0

// -----

func.func @conv2d_stride_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {stride = array<i64: 2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:94:3: error: adir.conv2d: stride must have 2 entries (height, width), got 1

// -----

func.func @conv2d_stride_not_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {stride = array<i64: 1, 0>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:102:3: error: adir.conv2d: stride entries must be positive, got [1, 0]

// -----

// Padding has four entries, also when symmetric.
func.func @conv2d_padding_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:111:3: error: adir.conv2d: padding must have 4 entries (top, bottom, left, right), got 2

// -----

func.func @conv2d_padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {padding = array<i64: 0, 0, -1, 0>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:119:3: error: adir.conv2d: padding entries must be non-negative, got [0, 0, -1, 0]

// -----

func.func @conv2d_dilation_not_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {dilation = array<i64: 0, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:127:3: error: adir.conv2d: dilation entries must be positive, got [0, 1]

// -----

func.func @conv2d_stride_not_i64(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {stride = array<i32: 2, 2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:135:3: error: adir.conv2d: property 'stride': Expected attribute i64 but got i32

// -----

func.func @conv2d_kernel_too_large(%x: tensor<1x3x4x8xf32>, %w: tensor<4x3x5x3xf32>) {
  %0 = adir.conv2d %x, %w : tensor<1x3x4x8xf32>, tensor<4x3x5x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:143:3: error: adir.conv2d: kernel height 5 exceeds the padded input height 4 (4 + padding 0 + 0)

// -----

// The kernel's extent counts its dilation.
func.func @conv2d_dilated_kernel_too_large(%x: tensor<1x3x8x4xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d %x, %w {padding = array<i64: 0, 0, 0, 1>, dilation = array<i64: 1, 3>} : tensor<1x3x8x4xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:152:3: error: adir.conv2d: kernel width 7 (3 dilated by 3) exceeds the padded input width 5 (4 + padding 0 + 1)

// -----

func.func @conv2d_grad_input_grad_rank(%dy: tensor<4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {input_size = array<i64: 8, 8>} : tensor<4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:160:3: error: adir.conv2d_grad_input: operand grad must have rank 4, got rank 3 (4x6x6)

// -----

func.func @conv2d_grad_input_weight_rank(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x9xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {input_size = array<i64: 8, 8>} : tensor<1x4x6x6xf32>, tensor<4x3x9xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:168:3: error: adir.conv2d_grad_input: operand weight must have rank 4, got rank 3 (4x3x9)

// -----

func.func @conv2d_grad_input_channels(%dy: tensor<1x5x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {input_size = array<i64: 8, 8>} : tensor<1x5x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:176:3: error: adir.conv2d_grad_input: output channels 5 and 4 of grad and weight do not match

// -----

func.func @conv2d_grad_input_groups(%dy: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {groups = 2 : i64, input_size = array<i64: 8, 8>} : tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:184:3: error: adir.conv2d_grad_input: output channels 3 of operand weight are not divisible by groups 2

// -----

func.func @conv2d_grad_input_missing_input_size(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:192:3: error: adir.conv2d_grad_input: property 'input_size' expected in operation 'adir.conv2d_grad_input'

// -----

func.func @conv2d_grad_input_input_size_entries(%dy: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {input_size = array<i64: 1, 3, 8, 8>} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:200:3: error: adir.conv2d_grad_input: input_size must have 2 entries (height, width), got 4

// -----

// With stride 2, inputs of 7 and 8 rows both give 4 output rows, but 9 gives 5.
func.func @conv2d_grad_input_grad_size(%dy: tensor<1x4x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, input_size = array<i64: 9, 8>} : tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:209:3: error: adir.conv2d_grad_input: operand grad has height 4, but the forward op gives 5 for an input height of 9

// -----

func.func @conv2d_grad_input_kernel_too_large(%dy: tensor<1x4x1x1xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = adir.conv2d_grad_input %dy, %w {input_size = array<i64: 2, 2>} : tensor<1x4x1x1xf32>, tensor<4x3x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:217:3: error: adir.conv2d_grad_input: kernel height 3 exceeds the padded input height 2 (2 + padding 0 + 0)

// -----

func.func @conv2d_grad_weight_input_rank(%x: tensor<3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 3, 3>} : tensor<3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:225:3: error: adir.conv2d_grad_weight: operand input must have rank 4, got rank 3 (3x8x8)

// -----

func.func @conv2d_grad_weight_grad_rank(%x: tensor<1x3x8x8xf32>, %dy: tensor<4x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 3, 3>} : tensor<1x3x8x8xf32>, tensor<4x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:233:3: error: adir.conv2d_grad_weight: operand grad must have rank 4, got rank 3 (4x6x6)

// -----

func.func @conv2d_grad_weight_batch(%x: tensor<2x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 3, 3>} : tensor<2x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:241:3: error: adir.conv2d_grad_weight: batch sizes 2 and 1 of input and grad do not match

// -----

func.func @conv2d_grad_weight_input_channels(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:249:3: error: adir.conv2d_grad_weight: input channels 3 are not divisible by groups 2

// -----

func.func @conv2d_grad_weight_output_channels(%x: tensor<1x4x8x8xf32>, %dy: tensor<1x3x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<1x4x8x8xf32>, tensor<1x3x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:257:3: error: adir.conv2d_grad_weight: output channels 3 of operand grad are not divisible by groups 2

// -----

func.func @conv2d_grad_weight_kernel_size_not_positive(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 3, 0>} : tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:265:3: error: adir.conv2d_grad_weight: kernel_size entries must be positive, got [3, 0]

// -----

func.func @conv2d_grad_weight_grad_size(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x5xf32>) {
  %0 = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 3, 3>} : tensor<1x3x8x8xf32>, tensor<1x4x6x5xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:273:3: error: adir.conv2d_grad_weight: operand grad has width 5, but the forward op gives 6 for an input width of 8

// -----

func.func @maxpool2d_input_rank(%x: tensor<3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:281:3: error: adir.maxpool2d: operand input must have rank 4, got rank 3 (3x8x8)

// -----

func.func @maxpool2d_missing_kernel_size(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:289:3: error: adir.maxpool2d: property 'kernel_size' expected in operation 'adir.maxpool2d'

// -----

func.func @maxpool2d_kernel_size_entries(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 2>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:297:3: error: adir.maxpool2d: kernel_size must have 2 entries (height, width), got 1

// -----

func.func @maxpool2d_kernel_size_not_positive(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 0, 2>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:305:3: error: adir.maxpool2d: kernel_size entries must be positive, got [0, 2]

// -----

func.func @maxpool2d_stride_not_positive(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: -1, 2>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:313:3: error: adir.maxpool2d: stride entries must be positive, got [-1, 2]

// -----

func.func @maxpool2d_padding_entries(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1, 1>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:321:3: error: adir.maxpool2d: padding must have 4 entries (top, bottom, left, right), got 3

// -----

// As in PyTorch, a pool pads at most half its kernel on each side, so that no window lies
// entirely in the padding.
func.func @maxpool2d_padding_beyond_half_kernel(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 3, 2>, padding = array<i64: 1, 1, 0, 2>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:331:3: error: adir.maxpool2d: padding 2 (right) exceeds half the kernel width 2

// -----

func.func @maxpool2d_kernel_too_large(%x: tensor<1x3x8x2xf32>) {
  %0 = adir.maxpool2d %x {kernel_size = array<i64: 3, 3>} : tensor<1x3x8x2xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:339:3: error: adir.maxpool2d: kernel width 3 exceeds the padded input width 2 (2 + padding 0 + 0)

// -----

func.func @avgpool2d_count_include_pad_not_bool(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.avgpool2d %x {kernel_size = array<i64: 2, 2>, count_include_pad = 1 : i64} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:347:3: error: adir.avgpool2d: property 'count_include_pad': Expected attribute i1 but got i64

// -----

func.func @avgpool2d_padding_beyond_half_kernel(%x: tensor<1x3x8x8xf32>) {
  %0 = adir.avgpool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : tensor<1x3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:355:3: error: adir.avgpool2d: padding 2 (top) exceeds half the kernel height 2

// -----

func.func @global_avgpool2d_input_rank(%x: tensor<3x8x8xf32>) {
  %0 = adir.global_avgpool2d %x : tensor<3x8x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:363:3: error: adir.global_avgpool2d: operand input must have rank 4, got rank 3 (3x8x8)

// -----

func.func @global_avgpool2d_no_pixels(%x: tensor<1x3x0x8xf32>) {
  %0 = adir.global_avgpool2d %x : tensor<1x3x0x8xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:371:3: error: adir.global_avgpool2d: operand input (1x3x0x8) has no pixels to average

// -----

func.func @maxpool2d_grad_grad_rank(%x: tensor<1x3x8x8xf32>, %dy: tensor<3x4x4xf32>) {
  %0 = adir.maxpool2d_grad %x, %dy {kernel_size = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:379:3: error: adir.maxpool2d_grad: operand grad must have rank 4, got rank 3 (3x4x4)

// -----

func.func @maxpool2d_grad_batch(%x: tensor<1x3x8x8xf32>, %dy: tensor<2x3x4x4xf32>) {
  %0 = adir.maxpool2d_grad %x, %dy {kernel_size = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<2x3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:387:3: error: adir.maxpool2d_grad: batch sizes 1 and 2 of input and grad do not match

// -----

func.func @maxpool2d_grad_channels(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x4x4xf32>) {
  %0 = adir.maxpool2d_grad %x, %dy {kernel_size = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:395:3: error: adir.maxpool2d_grad: channels 3 and 4 of input and grad do not match

// -----

func.func @maxpool2d_grad_grad_size(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x3x4x4xf32>) {
  %0 = adir.maxpool2d_grad %x, %dy {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:403:3: error: adir.maxpool2d_grad: operand grad has height 4, but the forward op gives 7 for an input height of 8

// -----

func.func @avgpool2d_grad_missing_input_size(%dy: tensor<1x3x4x4xf32>) {
  %0 = adir.avgpool2d_grad %dy {kernel_size = array<i64: 2, 2>} : tensor<1x3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:411:3: error: adir.avgpool2d_grad: property 'input_size' expected in operation 'adir.avgpool2d_grad'

// -----

func.func @avgpool2d_grad_input_size_not_positive(%dy: tensor<1x3x4x4xf32>) {
  %0 = adir.avgpool2d_grad %dy {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 0>} : tensor<1x3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:419:3: error: adir.avgpool2d_grad: input_size entries must be positive, got [8, 0]

// -----

func.func @avgpool2d_grad_grad_size(%dy: tensor<1x3x4x4xf32>) {
  %0 = adir.avgpool2d_grad %dy {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 10>} : tensor<1x3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:427:3: error: adir.avgpool2d_grad: operand grad has width 4, but the forward op gives 5 for an input width of 10

// -----

func.func @avgpool2d_grad_grad_rank(%dy: tensor<3x4x4xf32>) {
  %0 = adir.avgpool2d_grad %dy {kernel_size = array<i64: 2, 2>, input_size = array<i64: 8, 8>} : tensor<3x4x4xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:435:3: error: adir.avgpool2d_grad: operand grad must have rank 4, got rank 3 (3x4x4)

// -----

func.func @conv1d_input_rank(%x: tensor<1x3x1x8xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d %x, %w : tensor<1x3x1x8xf32>, tensor<4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:443:3: error: adir.conv1d: operand input must have rank 3, got rank 4 (1x3x1x8)

// -----

func.func @conv1d_channels(%x: tensor<1x3x8xf32>, %w: tensor<4x2x3xf32>) {
  %0 = adir.conv1d %x, %w : tensor<1x3x8xf32>, tensor<4x2x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:451:3: error: adir.conv1d: input channels 3 and weight channels 2 (x groups 1) do not match

// -----

func.func @conv1d_kernel_too_long(%x: tensor<1x3x4xf32>, %w: tensor<4x3x6xf32>) {
  %0 = adir.conv1d %x, %w : tensor<1x3x4xf32>, tensor<4x3x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:459:3: error: adir.conv1d: kernel length 6 exceeds the padded input length 4 (4 + padding 0 + 0)

// -----

func.func @conv1d_padding_entries(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d %x, %w {padding = array<i64: 1>} : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:467:3: error: adir.conv1d: padding must have 2 entries (left, right), got 1

// -----

func.func @conv1d_stride_zero(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d %x, %w {stride = array<i64: 0>} : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:475:3: error: adir.conv1d: stride entries must be positive, got [0]

// -----

func.func @conv1d_bias(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>, %b: tensor<5xf32>) {
  %0 = adir.conv1d %x, %w, %b : tensor<1x3x8xf32>, tensor<4x3x3xf32>, tensor<5xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:483:3: error: adir.conv1d: operand bias has 5 entries but operand weight has 4 output channels

// -----

func.func @conv1d_wrong_result(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d %x, %w : tensor<1x3x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x8xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:491:3: error: adir.conv1d: result type tensor<1x4x8xf32> does not match the type tensor<1x4x6xf32> implied by its operands and properties

// -----

func.func @conv1d_grad_input_grad_length(%dy: tensor<1x4x4xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d_grad_input %dy, %w {stride = array<i64: 2>, input_size = array<i64: 11>} : tensor<1x4x4xf32>, tensor<4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:499:3: error: adir.conv1d_grad_input: operand grad has length 4, but the forward op gives 5 for an input length of 11

// -----

func.func @conv1d_grad_input_size_entries(%dy: tensor<1x4x6xf32>, %w: tensor<4x3x3xf32>) {
  %0 = adir.conv1d_grad_input %dy, %w {input_size = array<i64: 1, 8>} : tensor<1x4x6xf32>, tensor<4x3x3xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:507:3: error: adir.conv1d_grad_input: input_size must have 1 entry (length), got 2

// -----

func.func @conv1d_grad_weight_batch(%x: tensor<2x3x8xf32>, %dy: tensor<1x4x6xf32>) {
  %0 = adir.conv1d_grad_weight %x, %dy {kernel_size = array<i64: 3>} : tensor<2x3x8xf32>, tensor<1x4x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:515:3: error: adir.conv1d_grad_weight: batch sizes 2 and 1 of input and grad do not match

// -----

func.func @conv1d_grad_weight_grad_rank(%x: tensor<1x3x8xf32>, %dy: tensor<1x4x1x6xf32>) {
  %0 = adir.conv1d_grad_weight %x, %dy {kernel_size = array<i64: 3>} : tensor<1x3x8xf32>, tensor<1x4x1x6xf32> -> tensor<*xf32>
  func.return
}
// CHECK: conv_and_pool_invalid.mlir:523:3: error: adir.conv1d_grad_weight: operand grad must have rank 3, got rank 4 (1x4x1x6)
