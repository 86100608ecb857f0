// SGD with momentum and weight decay: the update of torch.optim.SGD as one
// adir.momentum_update (or with update_ops=false written out), the momentum buffer declared as
// zero-initialised state, the frozen @scale left without state or update.
// RUN: adir-opt %s -p 'autodiff,insert-optimizer{kind=sgd lr=0.1 momentum=0.9 weight_decay=0.01}' | filecheck %s
// RUN: adir-opt %s -p 'autodiff,insert-optimizer{kind=sgd lr=0.1 momentum=0.9 weight_decay=0.01 update_ops=false}' | filecheck %s --check-prefix=ARITH

adir.param @w : tensor<3xf32> = #adir.normal<seed = 1>
adir.param @scale : tensor<3xf32> = #adir.fill<value = 2.0> {trainable = false}

func.func @loss(%x: tensor<3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3xf32>
  %s = adir.load @scale : tensor<3xf32>
  %xs = adir.mul %x, %s : tensor<3xf32>
  %y = adir.mul %xs, %w : tensor<3xf32>
  %l = adir.sum %y : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK:      adir.param @w : tensor<3xf32> = #adir.normal<seed = 1>
// CHECK-NEXT: adir.param @scale : tensor<3xf32> = #adir.fill<value = 2.0> {trainable = false}
// CHECK-NEXT: adir.param @w_momentum_buffer : tensor<3xf32> = #adir.zeros {trainable = false, adir.state_of = @w}
// CHECK-NOT:  adir.param @scale_

// CHECK-LABEL: func.func @train_step(%x: tensor<3xf32>) -> tensor<f32> attributes {adir.optimizer = "sgd"}
// CHECK:         %w_grad = adir.mul %y_grad, %xs : tensor<3xf32>
// CHECK-NEXT:    %[[LR:[0-9]+]] = adir.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT:    %w_momentum_buffer = adir.load @w_momentum_buffer : tensor<3xf32>
// CHECK-NEXT:    %[[NEWW:[0-9]+]], %[[NEWBUF:[0-9]+]] = adir.momentum_update %w, %w_momentum_buffer, %w_grad, %[[LR]] {momentum = 9.000000e-01 : f32, weight_decay = 1.000000e-02 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32> -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    adir.store %[[NEWW]], @w : tensor<3xf32>
// CHECK-NEXT:    adir.store %[[NEWBUF]], @w_momentum_buffer : tensor<3xf32>
// CHECK-NEXT:    func.return %l : tensor<f32>

// update_ops=false: the same update written out.
// ARITH-LABEL: func.func @train_step(%x: tensor<3xf32>) -> tensor<f32> attributes {adir.optimizer = "sgd"}
// ARITH:         %w_grad = adir.mul %y_grad, %xs : tensor<3xf32>
// ARITH-NEXT:    %[[LR:[0-9]+]] = adir.constant dense<1.000000e-01> : tensor<f32>
// ARITH-NEXT:    %w_momentum_buffer = adir.load @w_momentum_buffer : tensor<3xf32>
// g += wd * p
// ARITH-NEXT:    %[[WD:[0-9]+]] = adir.constant dense<1.000000e-02> : tensor<f32>
// ARITH-NEXT:    %[[WDP:[0-9]+]] = adir.mul %[[WD]], %w : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
// ARITH-NEXT:    %[[G2:[0-9]+]] = adir.add %w_grad, %[[WDP]] : tensor<3xf32>
// buf = momentum * buf + g
// ARITH-NEXT:    %[[M:[0-9]+]] = adir.constant dense<9.000000e-01> : tensor<f32>
// ARITH-NEXT:    %[[MB:[0-9]+]] = adir.mul %w_momentum_buffer, %[[M]] : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
// ARITH-NEXT:    %[[NEWBUF:[0-9]+]] = adir.add %[[MB]], %[[G2]] : tensor<3xf32>
// p -= lr * buf
// ARITH-NEXT:    %[[STEP:[0-9]+]] = adir.mul %[[LR]], %[[NEWBUF]] : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
// ARITH-NEXT:    %[[NEWW:[0-9]+]] = adir.sub %w, %[[STEP]] : tensor<3xf32>
// ARITH-NEXT:    adir.store %[[NEWW]], @w : tensor<3xf32>
// ARITH-NEXT:    adir.store %[[NEWBUF]], @w_momentum_buffer : tensor<3xf32>
// ARITH-NEXT:    func.return %l : tensor<f32>
