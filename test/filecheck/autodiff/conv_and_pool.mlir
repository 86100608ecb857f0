// The conv_and_pool VJP rules. conv2d's input and weight adjoints are conv2d_grad_input and
// conv2d_grad_weight with the forward op's properties plus the forward shape they cannot
// recover (input_size, kernel_size); the bias's is a sum over batch and pixels. maxpool2d's is
// maxpool2d_grad, which reads the forward input (no indices are saved); avgpool2d's is
// avgpool2d_grad; global_avgpool2d's is a composition.
// RUN: adir-opt %s --split-input-file -p 'autodiff{wrt_args=0}' | filecheck %s

adir.param @w : tensor<4x3x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @b : tensor<4xf32> = #adir.uniform<low = -0.19245008972987526, high = 0.19245008972987526, seed = 2>

// CHECK-LABEL: func.func @conv_grad(%x: tensor<2x3x8x8xf32>, %r: tensor<2x4x4x3xf32>) -> (tensor<f32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<2x3x8x8xf32>)
// CHECK:         %y_grad = adir.mul %p_grad, %r : tensor<2x4x4x3xf32>
// CHECK-NEXT:    %x_grad = adir.conv2d_grad_input %y_grad, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, dilation = array<i64: 1, 2>, input_size = array<i64: 8, 8>} : tensor<2x4x4x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8xf32>
// CHECK-NEXT:    %w_grad = adir.conv2d_grad_weight %x, %y_grad {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, dilation = array<i64: 1, 2>, kernel_size = array<i64: 3, 3>} : tensor<2x3x8x8xf32>, tensor<2x4x4x3xf32> -> tensor<4x3x3x3xf32>
// CHECK-NEXT:    %b_grad = adir.sum %y_grad {axes = array<i64: 0, 2, 3>} : tensor<2x4x4x3xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %l, %w_grad, %b_grad, %x_grad : tensor<f32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<2x3x8x8xf32>
func.func @conv(%x: tensor<2x3x8x8xf32>, %r: tensor<2x4x4x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x3x3x3xf32>
  %b = adir.load @b : tensor<4xf32>
  %y = adir.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, dilation = array<i64: 1, 2>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x3xf32>
  %p = adir.mul %y, %r : tensor<2x4x4x3xf32>
  %l = adir.sum %p : tensor<2x4x4x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @w : tensor<6x2x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

// Grouped: the gradient ops keep groups; without a bias there is no sum.
// CHECK-LABEL: func.func @grouped_grad
// CHECK:         %{{.*}} = adir.conv2d_grad_input %{{.*}}, %w {groups = 2 : i64, input_size = array<i64: 5, 5>} : tensor<1x6x3x3xf32>, tensor<6x2x3x3xf32> -> tensor<1x4x5x5xf32>
// CHECK-NEXT:    %{{.*}} = adir.conv2d_grad_weight %x, %{{.*}} {groups = 2 : i64, kernel_size = array<i64: 3, 3>} : tensor<1x4x5x5xf32>, tensor<1x6x3x3xf32> -> tensor<6x2x3x3xf32>
// CHECK-NOT:     adir.sum %{{.*}} {axes
// CHECK:         func.return
func.func @grouped(%x: tensor<1x4x5x5xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<6x2x3x3xf32>
  %y = adir.conv2d %x, %w {groups = 2 : i64} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  %l = adir.sum %y : tensor<1x6x3x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @w : tensor<4x3x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

// conv, relu, maxpool: maxpool2d_grad recomputes each window's argmax from its input %a, the
// relu output that relu_grad reads too, so the backward pass keeps no indices and no other
// forward value; the pre-activation %c is not read after the relu. With the stride left out
// (the kernel size), the gradient op leaves it out too. The image is data (wrt_args = 0 asks
// for its gradient here, so conv2d_grad_input appears).
// CHECK-LABEL: func.func @features_grad
// CHECK:         %a = adir.relu %c : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %m = adir.maxpool2d %a {kernel_size = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
// CHECK-NOT:     %c
// CHECK:         %[[DA:.*]] = adir.maxpool2d_grad %a, %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32> -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %[[DC:.*]] = adir.relu_grad %a, %[[DA]] : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %[[DX:.*]] = adir.conv2d_grad_input %[[DC]], %w {padding = array<i64: 1, 1, 1, 1>, input_size = array<i64: 8, 8>} : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %[[DW:.*]] = adir.conv2d_grad_weight %x, %[[DC]] {padding = array<i64: 1, 1, 1, 1>, kernel_size = array<i64: 3, 3>} : tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<4x3x3x3xf32>
// CHECK-NOT:     %c
// CHECK:         func.return %l, %[[DW]], %[[DX]] : tensor<f32>, tensor<4x3x3x3xf32>, tensor<1x3x8x8xf32>
func.func @features(%x: tensor<1x3x8x8xf32>, %r: tensor<1x4x4x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x3x3x3xf32>
  %c = adir.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  %a = adir.relu %c : tensor<1x4x8x8xf32>
  %m = adir.maxpool2d %a {kernel_size = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %p = adir.mul %m, %r : tensor<1x4x4x4xf32>
  %l = adir.sum %p : tensor<1x4x4x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// avgpool2d's adjoint reads only the adjoint of its result (and records the input's size);
// global_avgpool2d's is dy / (H * W) broadcast over the pixels, here H * W = 4 * 3.
// CHECK-LABEL: func.func @pools_grad
// CHECK:         %[[HW:.*]] = adir.constant dense<1.200000e+01> : tensor<f32>
// CHECK-NEXT:    %[[SHARE:.*]] = adir.div %{{.*}}, %[[HW]] : tensor<2x3x1x1xf32>, tensor<f32> -> tensor<2x3x1x1xf32>
// CHECK-NEXT:    %[[DV:.*]] = adir.broadcast_to %[[SHARE]] {shape = array<i64: 2, 3, 4, 3>} : tensor<2x3x1x1xf32> -> tensor<2x3x4x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = adir.avgpool2d_grad %[[DV]] {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_size = array<i64: 7, 5>} : tensor<2x3x4x3xf32> -> tensor<2x3x7x5xf32>
// CHECK-NEXT:    func.return %l, %[[DX]] : tensor<f32>, tensor<2x3x7x5xf32>
func.func @pools(%x: tensor<2x3x7x5xf32>) -> tensor<f32> attributes {adir.loss} {
  %v = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<2x3x7x5xf32> -> tensor<2x3x4x3xf32>
  %g = adir.global_avgpool2d %v : tensor<2x3x4x3xf32> -> tensor<2x3x1x1xf32>
  %l = adir.sum %g : tensor<2x3x1x1xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
