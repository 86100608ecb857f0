// Parameters with every kind of initial value, and the loads and stores that use them, print in
// their custom form and survive a trip through the generic form. An initializer prints its
// parameters in declaration order, leaving out those equal to their default except `seed`.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK:      adir.param @zeros : tensor<4xf32> = #adir.zeros
// CHECK-NEXT: adir.param @zeros_empty_brackets : tensor<4xf32> = #adir.zeros
// CHECK-NEXT: adir.param @filled : tensor<2x2xf32> = #adir.fill<value = 0.5>
// CHECK-NEXT: adir.param @filled_integer_literal : tensor<2xf32> = #adir.fill<value = 1.0>
// CHECK-NEXT: adir.param @uniform : tensor<3x4xf32> = #adir.uniform<low = -0.1, high = 0.1, seed = 7>
// CHECK-NEXT: adir.param @uniform_reordered : tensor<3xf32> = #adir.uniform<low = -2.0, high = 3.0, seed = 9>
// CHECK-NEXT: adir.param @uniform_defaults : tensor<3xf32> = #adir.uniform<seed = 0>
// CHECK-NEXT: adir.param @normal : tensor<8xf32> = #adir.normal<mean = 1.0, std = 0.02, seed = 3>
// CHECK-NEXT: adir.param @normal_defaults : tensor<8xf32> = #adir.normal<seed = 0>
// CHECK-NEXT: adir.param @kaiming : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
// CHECK-NEXT: adir.param @kaiming_conv : tensor<6x1x5x5xf32> = #adir.kaiming_uniform<mode = fan_out, seed = 18446744073709551615>
// CHECK-NEXT: adir.param @xavier : tensor<10x32xf32> = #adir.xavier_uniform<gain = 2.0, seed = 5>
// CHECK-NEXT: adir.param @xavier_defaults : tensor<10x32xf32> = #adir.xavier_uniform<seed = 0>
// CHECK-NEXT: adir.param @dense : tensor<2x3xf32> = dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT: adir.param @scalar : tensor<f32> = dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: adir.param @frozen : tensor<8xf32> = #adir.normal<std = 0.5, seed = 4> {trainable = false}
// CHECK-NEXT: adir.param @frozen_dense : tensor<2xf32> = dense<1.000000e+00> : tensor<2xf32> {trainable = false}
adir.param @zeros : tensor<4xf32> = #adir.zeros
adir.param @zeros_empty_brackets : tensor<4xf32> = #adir.zeros<>
adir.param @filled : tensor<2x2xf32> = #adir.fill<value = 0.5>
adir.param @filled_integer_literal : tensor<2xf32> = #adir.fill<value = 1>
adir.param @uniform : tensor<3x4xf32> = #adir.uniform<low = -0.1, high = 0.1, seed = 7>
adir.param @uniform_reordered : tensor<3xf32> = #adir.uniform<seed = 9, high = 3.0, low = -2.0>
adir.param @uniform_defaults : tensor<3xf32> = #adir.uniform<low = 0.0, high = 1.0>
adir.param @normal : tensor<8xf32> = #adir.normal<mean = 1.0, std = 0.02, seed = 3>
adir.param @normal_defaults : tensor<8xf32> = #adir.normal
adir.param @kaiming : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @kaiming_conv : tensor<6x1x5x5xf32> = #adir.kaiming_uniform<mode = fan_out, seed = 18446744073709551615>
adir.param @xavier : tensor<10x32xf32> = #adir.xavier_uniform<gain = 2.0, seed = 5>
adir.param @xavier_defaults : tensor<10x32xf32> = #adir.xavier_uniform<gain = 1.0>
adir.param @dense : tensor<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
adir.param @scalar : tensor<f32> = dense<0.0> : tensor<f32>
adir.param @frozen : tensor<8xf32> = #adir.normal<std = 0.5, seed = 4> {trainable = false}
adir.param @frozen_dense : tensor<2xf32> = dense<1.0> : tensor<2xf32> {trainable = false}

// CHECK-LABEL: func.func @step(%x: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %w = adir.load @uniform : tensor<3x4xf32>
// CHECK-NEXT:    %y = adir.add %w, %x : tensor<3x4xf32>
// CHECK-NEXT:    adir.store %y, @uniform : tensor<3x4xf32>
// CHECK-NEXT:    %s = adir.load @scalar {note = "read"} : tensor<f32>
// CHECK-NEXT:    adir.store %s, @scalar {note = "write"} : tensor<f32>
// CHECK-NEXT:    func.return %y : tensor<3x4xf32>
func.func @step(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = adir.load @uniform : tensor<3x4xf32>
  %y = adir.add %w, %x : tensor<3x4xf32>
  adir.store %y, @uniform : tensor<3x4xf32>
  %s = adir.load @scalar {note = "read"} : tensor<f32>
  adir.store %s, @scalar {note = "write"} : tensor<f32>
  func.return %y : tensor<3x4xf32>
}

// -----

// A load may leave its type to infer-shapes (see infer-shapes/params.mlir); a store accepts a
// value whose type is less precise than the parameter's.
// CHECK-LABEL: func.func @unknown_shapes
// CHECK-NEXT:    %w = adir.load @w : tensor<*xf32>
// CHECK-NEXT:    adir.store %w, @w : tensor<*xf32>
// CHECK-NEXT:    %v = adir.load @w : tensor<?x3xf32>
// CHECK-NEXT:    adir.store %v, @w : tensor<?x3xf32>
adir.param @w : tensor<2x3xf32> = #adir.zeros
func.func @unknown_shapes() {
  %w = adir.load @w : tensor<*xf32>
  adir.store %w, @w : tensor<*xf32>
  %v = adir.load @w : tensor<?x3xf32>
  adir.store %v, @w : tensor<?x3xf32>
  func.return
}
