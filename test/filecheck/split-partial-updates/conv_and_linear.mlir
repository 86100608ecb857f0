// A conv weight training its first quarter of output channels, and a linear weight its first 2
// rows: each becomes its trained block (the symbol, in RAM) and a frozen rest, and the layer one
// layer per block, joined along the output channels (the bias sliced to match). A depthwise
// conv, whose output channels read only their own input channel, reads the weight joined again
// instead. ceil(0.25 * 4) = 1 channel of @w.
// RUN: adir-opt %s -p split-partial-updates | filecheck %s
// RUN: adir-opt %s --optimizer=sgd --lr=0.5 | filecheck %s --check-prefix=STEP
// RUN: adir-opt %s --autodiff | filecheck %s --check-prefix=GRAD

adir.param @w : tensor<4x1x1x1xf32> = dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]]> : tensor<4x1x1x1xf32> {update_fraction = 0.25 : f32}
adir.param @b : tensor<4xf32> = dense<[0.5, 0.25, 0.125, 1.0]> : tensor<4xf32>
adir.param @dw : tensor<4x1x1x1xf32> = dense<2.0> : tensor<4x1x1x1xf32> {update_channels = 2 : i64}
adir.param @fc : tensor<3x4xf32> = dense<0.5> : tensor<3x4xf32> {update_channels = 2 : i64}

func.func @loss(%x: tensor<1x1x2x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x1x1x1xf32>
  %b = adir.load @b : tensor<4xf32>
  %y = adir.conv2d %x, %w, %b : tensor<1x1x2x2xf32>, tensor<4x1x1x1xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %dw = adir.load @dw : tensor<4x1x1x1xf32>
  %d = adir.conv2d %y, %dw {groups = 4 : i64} : tensor<1x4x2x2xf32>, tensor<4x1x1x1xf32> -> tensor<1x4x2x2xf32>
  %f = adir.reshape %d {shape = array<i64: 4, 4>} : tensor<1x4x2x2xf32> -> tensor<4x4xf32>
  %fc = adir.load @fc : tensor<3x4xf32>
  %z = adir.matmul %f, %fc {transpose_b} : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = adir.sum %z : tensor<4x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK:      adir.param @w : tensor<1x1x1x1xf32> = dense<1.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT: adir.param @w_frozen : tensor<3x1x1x1xf32> = dense<{{\[}}{{\[}}{{\[}}[2.000000e+00]]], {{\[}}{{\[}}[3.000000e+00]]], {{\[}}{{\[}}[4.000000e+00]]]]> : tensor<3x1x1x1xf32> {trainable = false, adir.frozen_part_of = @w}
// CHECK:      adir.param @dw : tensor<2x1x1x1xf32> = dense<2.000000e+00> : tensor<2x1x1x1xf32>
// CHECK-NEXT: adir.param @dw_frozen : tensor<2x1x1x1xf32> = dense<2.000000e+00> : tensor<2x1x1x1xf32> {trainable = false, adir.frozen_part_of = @dw}
// CHECK-NEXT: adir.param @fc : tensor<2x4xf32> = dense<5.000000e-01> : tensor<2x4xf32>
// CHECK-NEXT: adir.param @fc_frozen : tensor<1x4xf32> = dense<5.000000e-01> : tensor<1x4xf32> {trainable = false, adir.frozen_part_of = @fc}
// CHECK:      %w = adir.load @w : tensor<1x1x1x1xf32>
// CHECK-NEXT: %w_frozen = adir.load @w_frozen : tensor<3x1x1x1xf32>
// CHECK:      %[[B0:.*]] = adir.slice %b {start = array<i64: 0>, stop = array<i64: 1>} : tensor<4xf32> -> tensor<1xf32>
// CHECK-NEXT: %[[Y0:.*]] = adir.conv2d %x, %w, %[[B0]] : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32> -> tensor<1x1x2x2xf32>
// CHECK-NEXT: %[[B1:.*]] = adir.slice %b {start = array<i64: 1>, stop = array<i64: 4>} : tensor<4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[Y1:.*]] = adir.conv2d %x, %w_frozen, %[[B1]] : tensor<1x1x2x2xf32>, tensor<3x1x1x1xf32>, tensor<3xf32> -> tensor<1x3x2x2xf32>
// CHECK-NEXT: %y = adir.concat %[[Y0]], %[[Y1]] {axis = 1 : i64} : tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32> -> tensor<1x4x2x2xf32>
// CHECK:      %[[DW:.*]] = adir.concat %dw, %dw_frozen {adir.rematerialize} : tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32> -> tensor<4x1x1x1xf32>
// CHECK-NEXT: adir.conv2d %y, %[[DW]] {groups = 4 : i64}
// CHECK:      %[[Z0:.*]] = adir.matmul %f, %fc {transpose_b} : tensor<4x4xf32>, tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK-NEXT: %[[Z1:.*]] = adir.matmul %f, %fc_frozen {transpose_b} : tensor<4x4xf32>, tensor<1x4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %z = adir.concat %[[Z0]], %[[Z1]] {axis = 1 : i64} : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<4x3xf32>

// The step updates and stores the trained blocks only; the frozen ones are never written.
// STEP:     func.func @train_step
// STEP-NOT: adir.store {{.*}}@w_frozen
// STEP-NOT: adir.store {{.*}}@fc_frozen
// STEP-DAG: adir.store %{{.*}}, @w : tensor<1x1x1x1xf32>
// STEP-DAG: adir.store %{{.*}}, @fc : tensor<2x4xf32>
// STEP-DAG: adir.store %{{.*}}, @dw : tensor<2x1x1x1xf32>

// The backward pass: fc's input gradient is the sum of its blocks' (no whole weight); the
// depthwise weight is joined again right before its input gradient reads it, and its gradient
// is the trained rows' only: grad_weight rows come from the adjoint's channels, but a grouped
// conv's also from their input channels, so it is sliced from the whole one.
// GRAD:      func.func @loss_grad
// GRAD:      %f_grad = adir.matmul %{{.*}}, %fc_frozen : tensor<4x1xf32>, tensor<1x4xf32> -> tensor<4x4xf32>
// GRAD-NEXT: %[[DX:.*]] = adir.matmul %{{.*}}, %fc : tensor<4x2xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
// GRAD-NEXT: %fc_grad = adir.matmul %{{.*}}, %f {transpose_a} : tensor<4x2xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
// GRAD-NEXT: adir.add %f_grad, %[[DX]] : tensor<4x4xf32>
// GRAD:      %[[DW1:.*]] = adir.load @dw : tensor<2x1x1x1xf32>
// GRAD-NEXT: %[[DW2:.*]] = adir.load @dw_frozen : tensor<2x1x1x1xf32>
// GRAD-NEXT: %[[DW3:.*]] = adir.concat %[[DW1]], %[[DW2]] : tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32> -> tensor<4x1x1x1xf32>
// GRAD-NEXT: adir.conv2d_grad_input %{{.*}}, %[[DW3]] {groups = 4 : i64, input_size = array<i64: 2, 2>}
// GRAD:      %dw_grad = adir.conv2d_grad_weight %y, %{{.*}} {groups = 4 : i64, kernel_size = array<i64: 1, 1>} : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32> -> tensor<4x1x1x1xf32>
// GRAD-NEXT: adir.slice %dw_grad {start = array<i64: 0, 0, 0, 0>, stop = array<i64: 2, 1, 1, 1>} : tensor<4x1x1x1xf32> -> tensor<2x1x1x1xf32>
// GRAD:      %w_grad = adir.conv2d_grad_weight %x, %{{.*}} {kernel_size = array<i64: 1, 1>} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x1x1x1xf32>
