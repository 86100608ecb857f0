// reorder-updates moves each parameter update (its store and the ops only it needs) to the
// first point where all it reads is computed and the old value of its parameter has been read
// for the last time; everything else keeps its order.
// RUN: adir-opt %s --split-input-file -p reorder-updates | filecheck %s

adir.param @w : tensor<4x3xf32> = #adir.zeros
adir.param @b : tensor<4xf32> = #adir.zeros

// The bias's update needs only %dy, so it runs first; the weight's waits for %dx, the last
// read of the old weight, and then runs before the rest of the backward pass (exp, tanh).
func.func @dense(%x: tensor<2x3xf32>, %dy: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = adir.load @w : tensor<4x3xf32>
  %b = adir.load @b : tensor<4xf32>
  %gw = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %gb = adir.sum %dy {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<4xf32>
  %dx = adir.matmul %dy, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %e = adir.exp %dx : tensor<2x3xf32>
  %t = adir.tanh %e : tensor<2x3xf32>
  %lr = adir.constant dense<0.1> : tensor<f32>
  %w1 = adir.sgd_update %w, %gw, %lr : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %b1 = adir.sgd_update %b, %gb, %lr : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  adir.store %w1, @w : tensor<4x3xf32>
  adir.store %b1, @b : tensor<4xf32>
  func.return %t : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @dense
// CHECK-NEXT:    %b = adir.load @b
// CHECK-NEXT:    %gb = adir.sum %dy
// CHECK-NEXT:    %lr = adir.constant
// CHECK-NEXT:    %b1 = adir.sgd_update %b, %gb, %lr
// CHECK-NEXT:    adir.store %b1, @b
// CHECK-NEXT:    %w = adir.load @w
// CHECK-NEXT:    %gw = adir.matmul %dy, %x {transpose_a}
// CHECK-NEXT:    %dx = adir.matmul %dy, %w :
// CHECK-NEXT:    %w1 = adir.sgd_update %w, %gw, %lr
// CHECK-NEXT:    adir.store %w1, @w
// CHECK-NEXT:    %e = adir.exp %dx
// CHECK-NEXT:    %t = adir.tanh %e
// CHECK-NEXT:    func.return %t

// -----

adir.param @w : tensor<3xf32> = #adir.zeros

// A load after a store reads the new value, so the store may not pass it; and a second store
// to the same parameter stays after the first.
func.func @loads_after_stores(%g: tensor<3xf32>) -> tensor<3xf32> {
  %w = adir.load @w : tensor<3xf32>
  %lr = adir.constant dense<0.5> : tensor<f32>
  %w1 = adir.sgd_update %w, %g, %lr : tensor<3xf32>, tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %e = adir.exp %g : tensor<3xf32>
  adir.store %w1, @w : tensor<3xf32>
  %again = adir.load @w : tensor<3xf32>
  %w2 = adir.sgd_update %again, %e, %lr : tensor<3xf32>, tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  adir.store %w2, @w : tensor<3xf32>
  func.return %again : tensor<3xf32>
}

// CHECK-LABEL: func.func @loads_after_stores
// CHECK-NEXT:    %w = adir.load @w
// CHECK-NEXT:    %lr = adir.constant
// CHECK-NEXT:    %w1 = adir.sgd_update %w, %g, %lr
// CHECK-NEXT:    adir.store %w1, @w
// CHECK-NEXT:    %e = adir.exp %g
// CHECK-NEXT:    %again = adir.load @w
// CHECK-NEXT:    %w2 = adir.sgd_update %again, %e, %lr
// CHECK-NEXT:    adir.store %w2, @w
// CHECK-NEXT:    func.return %again

// -----

adir.param @gamma : tensor<2xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<2xf32> = #adir.zeros
adir.param @mean : tensor<2xf32> = #adir.zeros {trainable = false}
adir.param @var : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}

// A batchnorm's running statistics are stored right after the batchnorm, not at the end.
func.func @running_statistics(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %gamma = adir.load @gamma : tensor<2xf32>
  %beta = adir.load @beta : tensor<2xf32>
  %mean = adir.load @mean : tensor<2xf32>
  %var = adir.load @var : tensor<2xf32>
  %y, %bmean, %binvstd, %new_mean, %new_var = adir.batchnorm %x, %gamma, %beta, %mean, %var {momentum = 1.000000e-01 : f32, eps = 1.000000e-05 : f32} : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = adir.relu %y : tensor<4x2xf32>
  %s = adir.sigmoid %r : tensor<4x2xf32>
  adir.store %new_mean, @mean : tensor<2xf32>
  adir.store %new_var, @var : tensor<2xf32>
  func.return %s : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @running_statistics
// CHECK:         adir.batchnorm
// CHECK-NEXT:    adir.store %new_mean, @mean
// CHECK-NEXT:    adir.store %new_var, @var
// CHECK-NEXT:    %r = adir.relu %y
