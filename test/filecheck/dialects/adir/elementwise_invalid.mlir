// Every verifier rule of the elementwise family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:5:3: error: adir.add: operands lhs (2x3) and rhs (4) do not broadcast: dimensions 3 and 4 differ

// -----

func.func @wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = adir.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:13:3: error: adir.mul: result type tensor<3x2xf32> does not match the type tensor<2x3xf32> implied by its operands and properties

// -----

func.func @wrong_unary_result(%a: tensor<4xf32>) {
  %0 = adir.exp %a : tensor<4xf32> -> tensor<5xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:21:3: error: adir.exp: result type tensor<5xf32> does not match the type tensor<4xf32> implied by its operands and properties

// -----

func.func @int_operand(%a: tensor<4xi32>) {
  %0 = adir.neg %a : tensor<4xi32>
  func.return
}
// CHECK: elementwise_invalid.mlir:29:3: error: adir.neg: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @bad_predicate(%a: tensor<4xf32>) {
  %0 = adir.cmp %a, %a {predicate = "bigger"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return
}
// CHECK: elementwise_invalid.mlir:37:3: error: adir.cmp: unknown predicate 'bigger', expected one of eq, ne, lt, le, gt, ge

// -----

func.func @select_condition_not_bool(%a: tensor<4xf32>) {
  %0 = adir.select %a, %a, %a : tensor<4xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:45:3: error: adir.select: operand 'condition' at position 0 does not verify: f32 should be of base attribute integer

// -----

func.func @select_no_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  %0 = adir.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:53:3: error: adir.select: operands condition (3) and on_true (4) do not broadcast: dimensions 3 and 4 differ

// -----

func.func @select_condition_not_i1(%c: tensor<4xi32>, %a: tensor<4xf32>) {
  %0 = adir.select %c, %a, %a : tensor<4xi32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: elementwise_invalid.mlir:61:3: error: adir.select: operand condition must have element type i1, got i32
