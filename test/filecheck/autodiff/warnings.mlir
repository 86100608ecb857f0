// Legal but suspicious: a trainable parameter whose gradient is zero by construction, and a
// loss argument nothing reads. Warnings at the op, exit code 0, and the gradient still built.
// RUN: adir-opt %s -p autodiff 2>&1 >/dev/null | filecheck %s
// RUN: adir-opt %s -p autodiff 2>/dev/null | filecheck %s --check-prefix=IR

// CHECK:      warnings.mlir:21:1: warning: autodiff: argument %extra of @loss is not used
// CHECK:      warnings.mlir:18:1: warning: autodiff: parameter @unused is not used by @loss, so its gradient is zero (mark it {trainable = false} if that is intended)
// CHECK-NEXT: adir.param @unused : tensor<2xf32> = #adir.zeros
// CHECK-NEXT: ^
// CHECK:      warnings.mlir:24:3: warning: autodiff: parameter @cut does not reach the loss of @loss, so its gradient is zero
// CHECK-NEXT:   %c = adir.load @cut : tensor<3xf32>
// CHECK-NOT:  warning

// IR: func.func @loss_grad(%x: tensor<3xf32>, %extra: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>)

adir.param @w : tensor<3xf32> = #adir.fill<value = 2.0>
adir.param @frozen : tensor<3xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @unused : tensor<2xf32> = #adir.zeros
adir.param @cut : tensor<3xf32> = #adir.zeros

func.func @loss(%x: tensor<3xf32>, %extra: tensor<3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3xf32>
  %f = adir.load @frozen : tensor<3xf32>
  %c = adir.load @cut : tensor<3xf32>
  %m = adir.mul %x, %w : tensor<3xf32>
  %n = adir.mul %m, %f : tensor<3xf32>
  %s = adir.sum %n : tensor<3xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
