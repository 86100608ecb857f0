// The SGD update of a weight whose gradient is a matmul becomes one fused op, so the gradient
// is never materialised; a gradient with another use is left alone.
// RUN: adir-opt %s -p fuse-weight-updates | filecheck %s

adir.param @w : tensor<4x3xf32> = #adir.zeros
adir.param @v : tensor<4x3xf32> = #adir.zeros

func.func @step(%dy: tensor<2x4xf32>, %x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %lr = adir.constant dense<0.1> : tensor<f32>
  %w = adir.load @w : tensor<4x3xf32>
  %g = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %s = adir.mul %lr, %g : tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %w_new = adir.sub %w, %s : tensor<4x3xf32>
  adir.store %w_new, @w : tensor<4x3xf32>
  %v = adir.load @v : tensor<4x3xf32>
  %g2 = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %s2 = adir.mul %lr, %g2 : tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %v_new = adir.sub %v, %s2 : tensor<4x3xf32>
  adir.store %v_new, @v : tensor<4x3xf32>
  func.return %g2 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @step
// CHECK:         %w = adir.load @w : tensor<4x3xf32>
// CHECK-NEXT:    %[[W:.+]] = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK-NEXT:    adir.store %[[W]], @w : tensor<4x3xf32>
// %g2 is also returned: no fusion.
// CHECK:         %g2 = adir.matmul %dy, %x {transpose_a}
// CHECK-NEXT:    %s2 = adir.mul %lr, %g2
// CHECK-NEXT:    %v_new = adir.sub %v, %s2
