// Adam: the moments as zero-initialised state, one step counter, the bias corrections in
// double precision, and the update of torch.optim.Adam as one adir.adam_update, or with
// update_ops=false as the elementwise ops it stands for.
// RUN: adir-opt %s -p 'autodiff,insert-optimizer{kind=adam lr=0.001}' | filecheck %s
// RUN: adir-opt %s -p 'autodiff,insert-optimizer{kind=adam lr=0.001 update_ops=false}' | filecheck %s --check-prefix=ARITH

adir.param @w : tensor<2xf32> = #adir.normal<seed = 1>

func.func @loss(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<2xf32>
  %y = adir.mul %x, %w : tensor<2xf32>
  %l = adir.sum %y : tensor<2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK:      adir.param @w : tensor<2xf32> = #adir.normal<seed = 1>
// CHECK-NEXT: adir.param @optimizer_step : tensor<f32> = #adir.zeros {trainable = false, adir.optimizer_state}
// CHECK-NEXT: adir.param @w_exp_avg : tensor<2xf32> = #adir.zeros {trainable = false, adir.state_of = @w}
// CHECK-NEXT: adir.param @w_exp_avg_sq : tensor<2xf32> = #adir.zeros {trainable = false, adir.state_of = @w}

// CHECK-LABEL: func.func @train_step(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.optimizer = "adam"}
// CHECK:         %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %w_grad = adir.mul %y_grad, %x : tensor<2xf32>
// CHECK-NEXT:    %[[T:[0-9]+]] = adir.load @optimizer_step : tensor<f32>
// CHECK-NEXT:    %step = adir.add %[[T]], %[[ONE]] : tensor<f32>
// CHECK-NEXT:    %[[LR:[0-9]+]] = adir.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %bias_correction1 = adir.bias_correction %step {beta = 9.000000e-01 : f64} : tensor<f32>
// CHECK-NEXT:    %bias_correction2 = adir.bias_correction %step {beta = 9.990000e-01 : f64} : tensor<f32>
// CHECK-NEXT:    %bias_correction2_sqrt = adir.sqrt %bias_correction2 : tensor<f32>
// CHECK-NEXT:    %w_exp_avg = adir.load @w_exp_avg : tensor<2xf32>
// CHECK-NEXT:    %w_exp_avg_sq = adir.load @w_exp_avg_sq : tensor<2xf32>
// the whole update, one op: the new parameter and both moments
// CHECK-NEXT:    %[[NEWW:[0-9]+]], %[[NEWM:[0-9]+]], %[[NEWV:[0-9]+]] = adir.adam_update %w, %w_exp_avg, %w_exp_avg_sq, %w_grad, %[[LR]], %bias_correction1, %bias_correction2_sqrt {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    adir.store %[[NEWW]], @w : tensor<2xf32>
// CHECK-NEXT:    adir.store %step, @optimizer_step : tensor<f32>
// CHECK-NEXT:    adir.store %[[NEWM]], @w_exp_avg : tensor<2xf32>
// CHECK-NEXT:    adir.store %[[NEWV]], @w_exp_avg_sq : tensor<2xf32>
// CHECK-NEXT:    func.return %l : tensor<f32>

// update_ops=false: the same update written out.
// ARITH-LABEL: func.func @train_step(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.optimizer = "adam"}
// ARITH:         %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// ARITH:         %w_grad = adir.mul %y_grad, %x : tensor<2xf32>
// t = t + 1, then the bias corrections, once for every parameter
// ARITH-NEXT:    %[[T:[0-9]+]] = adir.load @optimizer_step : tensor<f32>
// ARITH-NEXT:    %step = adir.add %[[T]], %[[ONE]] : tensor<f32>
// ARITH-NEXT:    %[[LR:[0-9]+]] = adir.constant dense<1.000000e-03> : tensor<f32>
// ARITH-NEXT:    %bias_correction1 = adir.bias_correction %step {beta = 9.000000e-01 : f64} : tensor<f32>
// ARITH-NEXT:    %bias_correction2 = adir.bias_correction %step {beta = 9.990000e-01 : f64} : tensor<f32>
// ARITH-NEXT:    %bias_correction2_sqrt = adir.sqrt %bias_correction2 : tensor<f32>
// ARITH-NEXT:    %w_exp_avg = adir.load @w_exp_avg : tensor<2xf32>
// ARITH-NEXT:    %w_exp_avg_sq = adir.load @w_exp_avg_sq : tensor<2xf32>
// m = m + (1 - beta1) * (g - m)
// ARITH-NEXT:    %[[B1:[0-9]+]] = adir.constant dense<1.000000e-01> : tensor<f32>
// ARITH-NEXT:    %[[GM:[0-9]+]] = adir.sub %w_grad, %w_exp_avg : tensor<2xf32>
// ARITH-NEXT:    %[[SM:[0-9]+]] = adir.mul %[[B1]], %[[GM]] : tensor<f32>, tensor<2xf32> -> tensor<2xf32>
// ARITH-NEXT:    %[[NEWM:[0-9]+]] = adir.add %w_exp_avg, %[[SM]] : tensor<2xf32>
// v = v * beta2 + (1 - beta2) * g * g  (1 - beta2 and lr are the same f32 constant here)
// ARITH-NEXT:    %[[B2:[0-9]+]] = adir.constant dense<9.990000e-01> : tensor<f32>
// ARITH-NEXT:    %[[VB:[0-9]+]] = adir.mul %w_exp_avg_sq, %[[B2]] : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// ARITH-NEXT:    %[[CG:[0-9]+]] = adir.mul %[[LR]], %w_grad : tensor<f32>, tensor<2xf32> -> tensor<2xf32>
// ARITH-NEXT:    %[[CGG:[0-9]+]] = adir.mul %[[CG]], %w_grad : tensor<2xf32>
// ARITH-NEXT:    %[[NEWV:[0-9]+]] = adir.add %[[VB]], %[[CGG]] : tensor<2xf32>
// p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// ARITH-NEXT:    %[[STEPSIZE:[0-9]+]] = adir.div %[[LR]], %bias_correction1 : tensor<f32>
// ARITH-NEXT:    %[[SV:[0-9]+]] = adir.sqrt %[[NEWV]] : tensor<2xf32>
// ARITH-NEXT:    %[[VHAT:[0-9]+]] = adir.div %[[SV]], %bias_correction2_sqrt : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// ARITH-NEXT:    %[[EPS:[0-9]+]] = adir.constant dense<1.000000e-08> : tensor<f32>
// ARITH-NEXT:    %[[DEN:[0-9]+]] = adir.add %[[VHAT]], %[[EPS]] : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// ARITH-NEXT:    %[[RATIO:[0-9]+]] = adir.div %[[NEWM]], %[[DEN]] : tensor<2xf32>
// ARITH-NEXT:    %[[UPD:[0-9]+]] = adir.mul %[[STEPSIZE]], %[[RATIO]] : tensor<f32>, tensor<2xf32> -> tensor<2xf32>
// ARITH-NEXT:    %[[NEWW:[0-9]+]] = adir.sub %w, %[[UPD]] : tensor<2xf32>
// ARITH-NEXT:    adir.store %[[NEWW]], @w : tensor<2xf32>
// ARITH-NEXT:    adir.store %step, @optimizer_step : tensor<f32>
// ARITH-NEXT:    adir.store %[[NEWM]], @w_exp_avg : tensor<2xf32>
// ARITH-NEXT:    adir.store %[[NEWV]], @w_exp_avg_sq : tensor<2xf32>
// ARITH-NEXT:    func.return %l : tensor<f32>
