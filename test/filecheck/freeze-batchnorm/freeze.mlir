// freeze-batchnorm: a batchnorm whose gamma and beta are {trainable = false} runs with its
// running statistics (batchnorm_eval) and its running-statistic stores go; folded into the
// conv before it when that conv is frozen too. @fold: factor = gamma / sqrt(var + eps) =
// 2 / sqrt(0.25 + 0) = 4, so weight' = 0.5 * 4 = 2 and bias' = (0.25 - 0.25) * 4 + 1 = 1.
// RUN: adir-opt %s --split-input-file -p freeze-batchnorm | filecheck %s
// RUN: adir-opt %s --split-input-file -p 'freeze-batchnorm{fold=false}' | filecheck %s --check-prefix=NOFOLD
// RUN: adir-opt %s --split-input-file --autodiff | filecheck %s --check-prefix=SHORTCUT
// RUN: adir-opt %s --split-input-file --autodiff --train-frozen-batchnorm | filecheck %s --check-prefix=TRAIN
// RUN: not adir-opt %s --split-input-file --train-frozen-batchnorm 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: adir-opt %s --split-input-file -p 'freeze-batchnorm{trained_beta=false}' | filecheck %s --check-prefix=KEEP

adir.param @w : tensor<2x1x1x1xf32> = #adir.fill<value = 0.5> {trainable = false}
adir.param @b : tensor<2xf32> = #adir.fill<value = 0.25> {trainable = false}
adir.param @gamma : tensor<2xf32> = #adir.fill<value = 2.0> {trainable = false}
adir.param @beta : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @mean : tensor<2xf32> = #adir.fill<value = 0.25> {trainable = false}
adir.param @var : tensor<2xf32> = #adir.fill<value = 0.25> {trainable = false}
adir.param @fc : tensor<3x8xf32> = #adir.zeros

// CHECK-LABEL: adir.param @w_bn : tensor<2x1x1x1xf32> = dense<2.000000e+00> : tensor<2x1x1x1xf32> {trainable = false}
// CHECK-NEXT:  adir.param @w_bn_bias : tensor<2xf32> = dense<1.000000e+00> : tensor<2xf32> {trainable = false}
// CHECK-NEXT:  adir.param @fc
// CHECK:       func.func @fold
// CHECK-NEXT:    %w = adir.load @w_bn
// CHECK-NEXT:    %w_bias = adir.load @w_bn_bias
// CHECK-NEXT:    %y = adir.conv2d %x, %w, %w_bias
// CHECK-NEXT:    %r = adir.relu %y
// NOFOLD:        %y = adir.batchnorm_eval %c, %gamma, %beta, %mean, %var {eps = 0.000000e+00 : f32}
// NOFOLD-NOT:    adir.store
// SHORTCUT:      func.func @fold_grad
// SHORTCUT-NOT:  adir.batchnorm
// SHORTCUT:      func.return
// TRAIN:         adir.batchnorm %c, %gamma, %beta, %mean, %var
// TRAIN:         adir.store
// FLAG: adir-opt: error: --train-frozen-batchnorm needs --autodiff or --optimizer
func.func @fold(%x: tensor<4x1x2x2xf32>, %label: tensor<4xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<2x1x1x1xf32>
  %b = adir.load @b : tensor<2xf32>
  %c = adir.conv2d %x, %w, %b : tensor<4x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32> -> tensor<4x2x2x2xf32>
  %gamma = adir.load @gamma : tensor<2xf32>
  %beta = adir.load @beta : tensor<2xf32>
  %mean = adir.load @mean : tensor<2xf32>
  %var = adir.load @var : tensor<2xf32>
  %y, %bm, %bi, %m2, %v2 = adir.batchnorm %c, %gamma, %beta, %mean, %var {eps = 0.0 : f32} : tensor<4x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> (tensor<4x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  adir.store %m2, @mean : tensor<2xf32>
  adir.store %v2, @var : tensor<2xf32>
  %r = adir.relu %y : tensor<4x2x2x2xf32>
  %flat = adir.flatten %r {start_dim = 1 : i64} : tensor<4x2x2x2xf32> -> tensor<4x8xf32>
  %fc = adir.load @fc : tensor<3x8xf32>
  %logits = adir.matmul %flat, %fc {transpose_b} : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

// -----

// A trainable gamma: the batchnorm trains with batch statistics, as before.
adir.param @gamma : tensor<2xf32> = #adir.fill<value = 2.0>
adir.param @beta : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @mean : tensor<2xf32> = #adir.zeros {trainable = false}
adir.param @var : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}

// CHECK-LABEL: func.func @trainable_gamma
// NOFOLD-LABEL: func.func @trainable_gamma
// CHECK:         adir.batchnorm %x, %gamma, %beta, %mean, %var
// CHECK-NEXT:    adir.store %m2, @mean
// CHECK-NEXT:    adir.store %v2, @var
func.func @trainable_gamma(%x: tensor<4x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %gamma = adir.load @gamma : tensor<2xf32>
  %beta = adir.load @beta : tensor<2xf32>
  %mean = adir.load @mean : tensor<2xf32>
  %var = adir.load @var : tensor<2xf32>
  %y, %bm, %bi, %m2, %v2 = adir.batchnorm %x, %gamma, %beta, %mean, %var : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  adir.store %m2, @mean : tensor<2xf32>
  adir.store %v2, @var : tensor<2xf32>
  %loss = adir.mse %y, %x : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

// -----

// A frozen gamma and a trained beta (`--train=bias`): eval form, the beta a per-channel bias,
// no running-statistic store; `trained_beta=false` keeps it in training mode.
adir.param @gamma : tensor<2xf32> = #adir.fill<value = 2.0> {trainable = false}
adir.param @beta : tensor<2xf32> = #adir.fill<value = 1.0>
adir.param @mean : tensor<2xf32> = #adir.zeros {trainable = false}
adir.param @var : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}

// CHECK-LABEL:  func.func @trained_beta
// CHECK-NEXT:     %gamma = adir.load @gamma
// CHECK-NEXT:     %beta = adir.load @beta
// CHECK-NEXT:     %mean = adir.load @mean
// CHECK-NEXT:     %var = adir.load @var
// CHECK-NEXT:     %y = adir.batchnorm_eval %x, %gamma, %beta, %mean, %var
// CHECK-NEXT:     %loss = adir.mse %y, %x
// SHORTCUT-LABEL: func.func @trained_beta_grad
// SHORTCUT-NOT:   adir.batchnorm_grad
// SHORTCUT:       adir.batchnorm_eval
// SHORTCUT-NOT:   adir.batchnorm_grad
// SHORTCUT:       func.return
// KEEP-LABEL:     func.func @trained_beta
// KEEP:           adir.batchnorm %x, %gamma, %beta, %mean, %var
// KEEP-NEXT:      adir.store %m2, @mean
func.func @trained_beta(%x: tensor<4x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %gamma = adir.load @gamma : tensor<2xf32>
  %beta = adir.load @beta : tensor<2xf32>
  %mean = adir.load @mean : tensor<2xf32>
  %var = adir.load @var : tensor<2xf32>
  %y, %bm, %bi, %m2, %v2 = adir.batchnorm %x, %gamma, %beta, %mean, %var : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  adir.store %m2, @mean : tensor<2xf32>
  adir.store %v2, @var : tensor<2xf32>
  %loss = adir.mse %y, %x : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
