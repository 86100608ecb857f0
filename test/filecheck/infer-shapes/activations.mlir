// infer-shapes gives every activation its operand's type.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @mlp_head(%x: tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:    %0 = adir.relu %x : tensor<8x32xf32>
// CHECK-NEXT:    %1 = adir.leaky_relu %0 {alpha = 2.000000e-01 : f32} : tensor<8x32xf32>
// CHECK-NEXT:    %2 = adir.sigmoid %1 : tensor<8x32xf32>
// CHECK-NEXT:    %3 = adir.tanh %2 : tensor<8x32xf32>
// CHECK-NEXT:    %4 = adir.gelu %3 {approximate = "tanh"} : tensor<8x32xf32>
// CHECK-NEXT:    %5 = adir.softmax %4 : tensor<8x32xf32>
// CHECK-NEXT:    %6 = adir.log_softmax %5 {axis = 0 : i64} : tensor<8x32xf32>
// CHECK-NEXT:    %7 = adir.softplus %6 : tensor<8x32xf32>
// CHECK-NEXT:    %8 = adir.clamp %7 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<8x32xf32>
// CHECK-NEXT:    %9 = adir.hardswish %8 : tensor<8x32xf32>
// CHECK-NEXT:    %10 = adir.hardsigmoid %9 : tensor<8x32xf32>
// CHECK-NEXT:    func.return %10 : tensor<8x32xf32>
func.func @mlp_head(%x: tensor<8x32xf32>) -> tensor<*xf32> {
  %0 = adir.relu %x : tensor<8x32xf32> -> tensor<*xf32>
  %1 = adir.leaky_relu %0 {alpha = 0.2 : f32} : tensor<*xf32>
  %2 = adir.sigmoid %1 : tensor<*xf32>
  %3 = adir.tanh %2 : tensor<*xf32>
  %4 = adir.gelu %3 {approximate = "tanh"} : tensor<*xf32>
  %5 = adir.softmax %4 : tensor<*xf32>
  %6 = adir.log_softmax %5 {axis = 0 : i64} : tensor<*xf32>
  %7 = adir.softplus %6 : tensor<*xf32>
  %8 = adir.clamp %7 {min = 0.0 : f32, max = 6.0 : f32} : tensor<*xf32>
  %9 = adir.hardswish %8 : tensor<*xf32>
  %10 = adir.hardsigmoid %9 : tensor<*xf32>
  func.return %10 : tensor<*xf32>
}

// -----

// Dynamic dims stay dynamic; a declared result dim that the operand leaves unknown is kept.
// CHECK-LABEL: func.func @dynamic(%x: tensor<?x10xf32>) -> tensor<?x10xf32>
// CHECK-NEXT:    %0 = adir.softmax %x : tensor<?x10xf32>
// CHECK-NEXT:    %1 = adir.gelu %x : tensor<?x10xf32> -> tensor<4x10xf32>
// CHECK-NEXT:    func.return %0 : tensor<?x10xf32>
func.func @dynamic(%x: tensor<?x10xf32>) -> tensor<*xf32> {
  %0 = adir.softmax %x : tensor<?x10xf32> -> tensor<*xf32>
  %1 = adir.gelu %x : tensor<?x10xf32> -> tensor<4x10xf32>
  func.return %0 : tensor<*xf32>
}
