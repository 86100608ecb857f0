// Every verifier rule of the reductions family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @axis_out_of_range(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:5:3: error: adir.sum: axis 2 is out of range for rank 2

// -----

func.func @negative_axis_out_of_range(%x: tensor<2x3xf32>) {
  %0 = adir.mean %x {axes = array<i64: -3>} : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:13:3: error: adir.mean: axis -3 is out of range for rank 2

// -----

func.func @repeated_axis(%x: tensor<2x3xf32>) {
  %0 = adir.max %x {axes = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:21:3: error: adir.max: axes [0, 0] name axis 0 twice

// -----

// -1 and 1 are the same axis of a rank-2 tensor.
func.func @repeated_axis_negative(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:30:3: error: adir.sum: axes [1, -1] name axis 1 twice

// -----

// A repeated axis is an error even when the rank is not known.
func.func @repeated_axis_unranked(%x: tensor<*xf32>) {
  %0 = adir.sum %x {axes = array<i64: 1, 1>} : tensor<*xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:39:3: error: adir.sum: axes [1, 1] name axis 1 twice

// -----

func.func @empty_axes(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:47:3: error: adir.sum: axes is empty; leave it out to reduce over all axes

// -----

func.func @max_of_nothing(%x: tensor<2x0xf32>) {
  %0 = adir.max %x {axes = array<i64: 1>} : tensor<2x0xf32> -> tensor<2xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:55:3: error: adir.max: axis 1 has size 0, and the max of no elements is undefined

// -----

// Without keepdims the reduced axis is dropped.
func.func @keepdims_missing(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:64:3: error: adir.sum: result type tensor<2x1xf32> does not match the type tensor<2xf32> implied by its operands and properties

// -----

// With keepdims the reduced axis stays, with size 1.
func.func @keepdims_wrong_dim(%x: tensor<2x3xf32>) {
  %0 = adir.mean %x {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:73:3: error: adir.mean: result type tensor<2x3xf32> does not match the type tensor<2x1xf32> implied by its operands and properties

// -----

// Without axes and keepdims the result is a scalar, whatever the input's rank.
func.func @all_axes_is_scalar(%x: tensor<*xf32>) {
  %0 = adir.max %x : tensor<*xf32> -> tensor<1xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:82:3: error: adir.max: result type tensor<1xf32> does not match the type tensor<f32> implied by its operands and properties

// -----

func.func @int_operand(%x: tensor<4xi32>) {
  %0 = adir.sum %x : tensor<4xi32> -> tensor<f32>
  func.return
}
// CHECK: reductions_invalid.mlir:90:3: error: adir.sum: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @axes_not_i64(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = array<i32: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:98:3: error: adir.sum: property 'axes': Expected attribute i64 but got i32

// -----

func.func @axes_not_an_array(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {axes = [1]} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:106:3: error: adir.sum: property 'axes': [1 : i64] should be of base attribute array

// -----

func.func @keepdims_not_unit(%x: tensor<2x3xf32>) {
  %0 = adir.sum %x {keepdims = true} : tensor<2x3xf32> -> tensor<1x1xf32>
  func.return
}
// CHECK: reductions_invalid.mlir:114:3: error: adir.sum: property 'keepdims': true should be of base attribute unit
