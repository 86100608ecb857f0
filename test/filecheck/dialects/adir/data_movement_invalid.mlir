// Every verifier rule of the data movement family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @transpose_missing_permutation(%x: tensor<2x3xf32>) {
  %0 = adir.transpose %x : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:5:3: error: adir.transpose: property 'permutation' expected in operation 'adir.transpose'

// -----

func.func @transpose_permutation_not_i64(%x: tensor<2x3xf32>) {
  %0 = adir.transpose %x {permutation = array<i32: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:13:3: error: adir.transpose: property 'permutation': Expected attribute i64 but got i32

// -----

func.func @transpose_wrong_length(%x: tensor<2x3x4xf32>) {
  %0 = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:21:3: error: adir.transpose: permutation [1, 0] has 2 entries but operand input has rank 3 (2x3x4)

// -----

// Each axis exactly once.
func.func @transpose_repeated_axis(%x: tensor<2x3xf32>) {
  %0 = adir.transpose %x {permutation = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:30:3: error: adir.transpose: permutation [1, 1] is not a permutation of [0, 1]

// -----

func.func @transpose_axis_out_of_range(%x: tensor<2x3xf32>) {
  %0 = adir.transpose %x {permutation = array<i64: 0, 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:38:3: error: adir.transpose: permutation [0, 2] is not a permutation of [0, 1]

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) {
  %0 = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:46:3: error: adir.transpose: result type tensor<2x3xf32> does not match the type tensor<3x2xf32> implied by its operands and properties

// -----

func.func @reshape_negative_entry(%x: tensor<2x3xf32>) {
  %0 = adir.reshape %x {shape = array<i64: -2, 3>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:54:3: error: adir.reshape: shape [-2, 3] has entry -2; entries must be non-negative, or -1 for the one inferred

// -----

func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  %0 = adir.reshape %x {shape = array<i64: -1, -1>} : tensor<2x3xf32> -> tensor<6x1xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:62:3: error: adir.reshape: shape [-1, -1] has more than one -1

// -----

func.func @reshape_count(%x: tensor<3x4xf32>) {
  %0 = adir.reshape %x {shape = array<i64: 5, 2>} : tensor<3x4xf32> -> tensor<5x2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:70:3: error: adir.reshape: operand input (3x4) has 12 elements but shape [5, 2] has 10

// -----

func.func @reshape_inferred_not_multiple(%x: tensor<3x4xf32>) {
  %0 = adir.reshape %x {shape = array<i64: 5, -1>} : tensor<3x4xf32> -> tensor<5x?xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:78:3: error: adir.reshape: operand input (3x4) has 12 elements, not a multiple of the 5 that shape [5, -1] fixes

// -----

// As in torch.reshape: beside a 0 entry, -1 is ambiguous.
func.func @reshape_inferred_with_zero(%x: tensor<0x4xf32>) {
  %0 = adir.reshape %x {shape = array<i64: 0, -1>} : tensor<0x4xf32> -> tensor<0x?xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:87:3: error: adir.reshape: shape [0, -1] has a 0 entry, so its -1 could be any size

// -----

func.func @reshape_result(%x: tensor<3x4xf32>) {
  %0 = adir.reshape %x {shape = array<i64: -1, 6>} : tensor<3x4xf32> -> tensor<3x6xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:95:3: error: adir.reshape: result type tensor<3x6xf32> does not match the type tensor<2x6xf32> implied by its operands and properties

// -----

func.func @broadcast_to_negative_entry(%x: tensor<3xf32>) {
  %0 = adir.broadcast_to %x {shape = array<i64: -1, 3>} : tensor<3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:103:3: error: adir.broadcast_to: shape [-1, 3] has a negative entry

// -----

func.func @broadcast_to_rank(%x: tensor<2x3x4xf32>) {
  %0 = adir.broadcast_to %x {shape = array<i64: 3, 4>} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:111:3: error: adir.broadcast_to: cannot broadcast operand input (2x3x4) to shape [3, 4]: rank 3 exceeds 2

// -----

func.func @broadcast_to_dimension(%x: tensor<3x2xf32>) {
  %0 = adir.broadcast_to %x {shape = array<i64: 4, 3>} : tensor<3x2xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:119:3: error: adir.broadcast_to: cannot broadcast operand input (3x2) to shape [4, 3]: dimension 3 is neither 1 nor 4

// -----

func.func @broadcast_to_result(%x: tensor<3x1xf32>) {
  %0 = adir.broadcast_to %x {shape = array<i64: 3, 4>} : tensor<3x1xf32> -> tensor<3x1xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:127:3: error: adir.broadcast_to: result type tensor<3x1xf32> does not match the type tensor<3x4xf32> implied by its operands and properties

// -----

// A parse error: the value must be dense data.
func.func @constant_not_dense() {
  %0 = adir.constant array<i64: 1, 2> : tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:136:22: error: adir.constant: expected dense data such as dense<[1.0, 2.0]> : tensor<2xf32>

// -----

// The result has the data's type: f32, or i8 / i32 (the quantized family's data).
func.func @constant_int_custom() {
  %0 = adir.constant dense<[1, 2]> : tensor<2xi16>
  func.return
}
// CHECK: data_movement_invalid.mlir:145:3: error: adir.constant: value must be a tensor of f32, i8 or i32, got tensor<2xi16>

// -----

// In the generic form the data and result types can disagree.
func.func @constant_int_generic() {
  %0 = "adir.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:154:3: error: adir.constant: result type tensor<2xf32> does not match the type tensor<2xi32> implied by its operands and properties

// -----

func.func @constant_vector() {
  %0 = "adir.constant"() <{value = dense<1.0> : vector<2xf32>}> : () -> tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:162:3: error: adir.constant: value must be a tensor of f32, i8 or i32, got vector<2xf32>

// -----

func.func @constant_result() {
  %0 = "adir.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:170:3: error: adir.constant: result type tensor<3xf32> does not match the type tensor<2xf32> implied by its operands and properties

// -----

func.func @flatten_start_out_of_range(%x: tensor<2x3x4xf32>) {
  %0 = adir.flatten %x {start_dim = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:178:3: error: adir.flatten: axis 3 is out of range for rank 3

// -----

func.func @flatten_end_out_of_range(%x: tensor<2x3x4xf32>) {
  %0 = adir.flatten %x {end_dim = -4 : i64} : tensor<2x3x4xf32> -> tensor<24xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:186:3: error: adir.flatten: axis -4 is out of range for rank 3

// -----

// As torch.flatten: start_dim cannot come after end_dim.
func.func @flatten_start_after_end(%x: tensor<2x3x4xf32>) {
  %0 = adir.flatten %x {start_dim = -1 : i64, end_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:195:3: error: adir.flatten: start_dim -1 comes after end_dim 1 (rank 3)

// -----

// A rank-0 input counts as rank 1.
func.func @flatten_scalar_axis(%x: tensor<f32>) {
  %0 = adir.flatten %x {start_dim = 1 : i64} : tensor<f32> -> tensor<1xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:204:3: error: adir.flatten: axis 1 is out of range for rank 1

// -----

func.func @flatten_result(%x: tensor<2x3x4xf32>) {
  %0 = adir.flatten %x {start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:212:3: error: adir.flatten: result type tensor<6x4xf32> does not match the type tensor<2x12xf32> implied by its operands and properties

// -----

func.func @pad_lengths_differ(%x: tensor<2x3x4xf32>) {
  %0 = adir.pad %x {low = array<i64: 0, 0, 1>, high = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<2x4x5xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:220:3: error: adir.pad: low [0, 0, 1] and high [0, 1] have different lengths

// -----

// One entry per dim.
func.func @pad_rank(%x: tensor<2x3x4xf32>) {
  %0 = adir.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<2x5x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:229:3: error: adir.pad: low [0, 1] has 2 entries but operand input has rank 3

// -----

// Negative padding would crop; adir.slice does that.
func.func @pad_negative(%x: tensor<2x3x4xf32>) {
  %0 = adir.pad %x {low = array<i64: 0, -1, 0>, high = array<i64: 0, 0, 0>} : tensor<2x3x4xf32> -> tensor<2x2x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:238:3: error: adir.pad: low [0, -1, 0] and high [0, 0, 0] must not be negative (adir.slice crops)

// -----

func.func @pad_missing_high(%x: tensor<2x3x4xf32>) {
  %0 = adir.pad %x {low = array<i64: 0, 0, 0>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:246:3: error: adir.pad: property 'high' expected in operation 'adir.pad'

// -----

func.func @pad_result(%x: tensor<2x3x4xf32>) {
  %0 = adir.pad %x {low = array<i64: 1, 0, 0>, high = array<i64: 0, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:254:3: error: adir.pad: result type tensor<3x3x4xf32> does not match the type tensor<3x3x6xf32> implied by its operands and properties

// -----

// The custom form cannot even write this; the generic form can.
func.func @concat_no_inputs() {
  %0 = "adir.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:263:3: error: adir.concat: needs at least one input

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  %0 = adir.concat %a, %b : tensor<2x3xf32>, tensor<2x3x1xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:271:3: error: adir.concat: inputs #0 (2x3) and #1 (2x3x1) have ranks 2 and 3

// -----

// Only the dims along the axis may differ.
func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x4xf32>) {
  %0 = adir.concat %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x4xf32> -> tensor<6x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:280:3: error: adir.concat: inputs #0 (2x3) and #2 (2x4) differ in dimension 1 (3 and 4); only axis 0 may differ

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  %0 = adir.concat %a, %a {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:288:3: error: adir.concat: axis 2 is out of range for rank 2

// -----

func.func @concat_scalars(%a: tensor<f32>) {
  %0 = adir.concat %a, %a : tensor<f32>, tensor<f32> -> tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:296:3: error: adir.concat: inputs must have rank 1 or more, got rank 0

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) {
  %0 = adir.concat %a, %b : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:304:3: error: adir.concat: result type tensor<2x3xf32> does not match the type tensor<3x3xf32> implied by its operands and properties

// -----

// One entry per dim.
func.func @slice_start_rank(%x: tensor<2x3x4xf32>) {
  %0 = adir.slice %x {start = array<i64: 0, 0>, stop = array<i64: 2, 3, 4>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:313:3: error: adir.slice: start [0, 0] has 2 entries but operand input has rank 3

// -----

func.func @slice_step_rank(%x: tensor<2x3x4xf32>) {
  %0 = adir.slice %x {start = array<i64: 0, 0, 0>, stop = array<i64: 2, 3, 4>, step = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:321:3: error: adir.slice: step [1, 2] has 2 entries but operand input has rank 3

// -----

// An unranked input: the arrays must at least agree.
func.func @slice_lengths_unranked(%x: tensor<*xf32>) {
  %0 = adir.slice %x {start = array<i64: 0, 0>, stop = array<i64: 2>} : tensor<*xf32> -> tensor<*xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:330:3: error: adir.slice: start [0, 0], stop [2] and step [1, 1] have different lengths

// -----

// Steps are positive (Python: a zero step is an error; negative steps are not supported).
func.func @slice_step_zero(%x: tensor<2x3x4xf32>) {
  %0 = adir.slice %x {start = array<i64: 0, 0, 0>, stop = array<i64: 2, 3, 4>, step = array<i64: 1, 0, 1>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:339:3: error: adir.slice: step [1, 0, 1] has entry 0; steps must be positive

// -----

func.func @slice_step_negative(%x: tensor<2x3x4xf32>) {
  %0 = adir.slice %x {start = array<i64: 1, 2, 3>, stop = array<i64: 0, 0, 0>, step = array<i64: -1, -1, -1>} : tensor<2x3x4xf32> -> tensor<1x2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:347:3: error: adir.slice: step [-1, -1, -1] has entry -1; steps must be positive

// -----

func.func @slice_result(%x: tensor<2x3x4xf32>) {
  %0 = adir.slice %x {start = array<i64: 0, 0, 0>, stop = array<i64: 2, 3, 4>, step = array<i64: 1, 1, 3>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:355:3: error: adir.slice: result type tensor<2x3x4xf32> does not match the type tensor<2x3x2xf32> implied by its operands and properties

// -----

func.func @slice_grad_shape_negative(%x: tensor<2xf32>) {
  %0 = adir.slice_grad %x {start = array<i64: 0>, stop = array<i64: 2>, shape = array<i64: -2>} : tensor<2xf32> -> tensor<2xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:363:3: error: adir.slice_grad: shape [-2] has a negative entry

// -----

func.func @slice_grad_rank(%x: tensor<2xf32>) {
  %0 = adir.slice_grad %x {start = array<i64: 0>, stop = array<i64: 2>, shape = array<i64: 2, 3>} : tensor<2xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:371:3: error: adir.slice_grad: start [0] has 1 entries but shape [2, 3] has rank 2

// -----

// grad has the shape of the slice.
func.func @slice_grad_grad_shape(%x: tensor<2x3xf32>) {
  %0 = adir.slice_grad %x {start = array<i64: 0, 0>, stop = array<i64: 2, 3>, step = array<i64: 1, 2>, shape = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: data_movement_invalid.mlir:380:3: error: adir.slice_grad: operand grad (2x3) is not the shape 2x2 of the slice of shape [2, 3]
