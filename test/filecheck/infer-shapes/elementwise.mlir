// infer-shapes fills unknown result shapes of elementwise ops from their operands, refines the
// function's result type from what it returns and call results from the callee.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @chain(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %1 = adir.exp %0 : tensor<2x3xf32>
// CHECK-NEXT:    %2 = adir.cmp %1, %b {predicate = "lt"} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
// CHECK-NEXT:    %3 = adir.select %2, %1, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %3 : tensor<2x3xf32>
func.func @chain(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
  %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<*xf32>
  %1 = adir.exp %0 : tensor<*xf32>
  %2 = adir.cmp %1, %b {predicate = "lt"} : tensor<*xf32>, tensor<3xf32> -> tensor<*xi1>
  %3 = adir.select %2, %1, %b : tensor<*xi1>, tensor<*xf32>, tensor<3xf32> -> tensor<*xf32>
  func.return %3 : tensor<*xf32>
}

// -----

// Dynamic dims stay dynamic unless an operand knows them.
// CHECK-LABEL: func.func @dynamic(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %0 = adir.mul %a, %b : tensor<?x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %1 = adir.neg %a : tensor<?x3xf32>
func.func @dynamic(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>) -> tensor<?x?xf32> {
  %0 = adir.mul %a, %b : tensor<?x3xf32>, tensor<4x1xf32> -> tensor<?x?xf32>
  %1 = adir.neg %a : tensor<?x3xf32> -> tensor<*xf32>
  func.return %0 : tensor<?x?xf32>
}

// -----

// Calls take their result types from the callee, once its signature is known.
// CHECK-LABEL: func.func @caller(%x: tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %0 = func.call @callee(%x) : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %1 = adir.sqrt %0 : tensor<5xf32>
func.func @caller(%x: tensor<5xf32>) -> tensor<*xf32> {
  %0 = func.call @callee(%x) : (tensor<5xf32>) -> tensor<*xf32>
  %1 = adir.sqrt %0 : tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
func.func @callee(%x: tensor<5xf32>) -> tensor<*xf32> {
  %0 = adir.exp %x : tensor<5xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}
