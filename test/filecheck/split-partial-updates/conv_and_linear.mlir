// A conv weight training its first quarter of output channels, and a linear weight its first 2
// rows: each becomes its trained block (the symbol, in RAM) and a frozen rest, joined by a
// concat where the weight is read. ceil(0.25 * 4) = 1 channel of @w.
// RUN: adir-opt %s -p split-partial-updates | filecheck %s
// RUN: adir-opt %s --optimizer=sgd --lr=0.5 | filecheck %s --check-prefix=STEP
// RUN: adir-opt %s --autodiff | filecheck %s --check-prefix=GRAD

adir.param @w : tensor<4x1x1x1xf32> = dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]]> : tensor<4x1x1x1xf32> {update_fraction = 0.25 : f32}
adir.param @fc : tensor<3x4xf32> = dense<0.5> : tensor<3x4xf32> {update_channels = 2 : i64}

func.func @loss(%x: tensor<1x1x2x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x1x1x1xf32>
  %y = adir.conv2d %x, %w : tensor<1x1x2x2xf32>, tensor<4x1x1x1xf32> -> tensor<1x4x2x2xf32>
  %f = adir.reshape %y {shape = array<i64: 4, 4>} : tensor<1x4x2x2xf32> -> tensor<4x4xf32>
  %fc = adir.load @fc : tensor<3x4xf32>
  %z = adir.matmul %f, %fc {transpose_b} : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = adir.sum %z : tensor<4x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK:      adir.param @w : tensor<1x1x1x1xf32> = dense<1.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT: adir.param @w_frozen : tensor<3x1x1x1xf32> = dense<{{\[}}{{\[}}{{\[}}[2.000000e+00]]], {{\[}}{{\[}}[3.000000e+00]]], {{\[}}{{\[}}[4.000000e+00]]]]> : tensor<3x1x1x1xf32> {trainable = false, adir.frozen_part_of = @w}
// CHECK-NEXT: adir.param @fc : tensor<2x4xf32> = dense<5.000000e-01> : tensor<2x4xf32>
// CHECK-NEXT: adir.param @fc_frozen : tensor<1x4xf32> = dense<5.000000e-01> : tensor<1x4xf32> {trainable = false, adir.frozen_part_of = @fc}
// CHECK:      %w = adir.load @w : tensor<1x1x1x1xf32>
// CHECK-NEXT: %w_frozen = adir.load @w_frozen : tensor<3x1x1x1xf32>
// CHECK-NEXT: %[[W:.*]] = adir.concat %w, %w_frozen {adir.rematerialize} : tensor<1x1x1x1xf32>, tensor<3x1x1x1xf32> -> tensor<4x1x1x1xf32>
// CHECK-NEXT: adir.conv2d %x, %[[W]]
// CHECK:      %[[FC:.*]] = adir.concat %fc, %fc_frozen {adir.rematerialize} : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: adir.matmul %{{.*}}, %[[FC]] {transpose_b}

// The step updates and stores the trained blocks only; the frozen ones are never written.
// STEP:     func.func @train_step
// STEP-NOT: adir.store {{.*}}@w_frozen
// STEP-NOT: adir.store {{.*}}@fc_frozen
// STEP-DAG: adir.store %{{.*}}, @w : tensor<1x1x1x1xf32>
// STEP-DAG: adir.store %{{.*}}, @fc : tensor<2x4xf32>

// The gradient of a trained block is computed from the output channels it owns: the adjoint's
// first channels (a slice of it), never the whole weight's gradient.
// GRAD:      func.func @loss_grad
// The backward pass joins fc's blocks again where it reads the whole weight (the input
// gradient), rather than keeping the forward's joined copy alive.
// GRAD:      %z_grad = adir.broadcast_to
// GRAD-NEXT: %[[FC1:.*]] = adir.load @fc : tensor<2x4xf32>
// GRAD-NEXT: %[[FC2:.*]] = adir.load @fc_frozen : tensor<1x4xf32>
// GRAD-NEXT: %[[FC3:.*]] = adir.concat %[[FC1]], %[[FC2]] : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<3x4xf32>
// GRAD-NEXT: %f_grad = adir.matmul %z_grad, %[[FC3]] : tensor<4x3xf32>, tensor<3x4xf32> -> tensor<4x4xf32>
// GRAD-NOT:  conv2d_grad_weight {{.*}} -> tensor<4x1x1x1xf32>
// GRAD:      %[[DZ:.*]] = adir.slice %z_grad {start = array<i64: 0, 0>, stop = array<i64: 4, 2>} : tensor<4x3xf32> -> tensor<4x2xf32>
// GRAD-NEXT: %fc_grad = adir.matmul %[[DZ]], %f {transpose_a} : tensor<4x2xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
// GRAD:      %[[DY:.*]] = adir.slice %y_grad {start = array<i64: 0, 0, 0, 0>, stop = array<i64: 1, 1, 2, 2>} : tensor<1x4x2x2xf32> -> tensor<1x1x2x2xf32>
// GRAD-NEXT: %w_grad = adir.conv2d_grad_weight %x, %[[DY]] {kernel_size = array<i64: 1, 1>} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x1x1x1xf32>
