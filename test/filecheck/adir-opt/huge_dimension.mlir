// A dimension, or an element count, that does not fit a 64-bit index is a verifier error at the
// op, exit code 1; with 2^64 it used to crash autodiff (an internal error, exit code 2).
// RUN: not adir-opt %s --autodiff 2>&1 | filecheck %s
// RUN: sed 's/18446744073709551616/99999999999/g' %s | not adir-opt --autodiff 2>&1 | filecheck %s --check-prefix=COUNT

func.func @loss(%x: tensor<18446744073709551616x99999999999x1xf32>) -> tensor<f32> attributes {adir.loss} {
  %f = adir.flatten %x {start_dim = 1 : i64} : tensor<18446744073709551616x99999999999x1xf32> -> tensor<18446744073709551616x99999999999xf32>
  %m = adir.mul %f, %f : tensor<18446744073709551616x99999999999xf32>
  %s = adir.sum %m : tensor<18446744073709551616x99999999999xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
// CHECK: huge_dimension.mlir:7:3: error: adir.flatten: operand tensor<18446744073709551616x99999999999x1xf32>: dimension 18446744073709551616 is not in [0, 2^63)
// CHECK-NOT: internal error
// COUNT: error: adir.flatten: {{.*}} do not fit a 64-bit index
