// DS-CNN, the depthwise-separable CNN for keyword spotting on microcontrollers (Zhang, Suda,
// Lai & Chandra, "Hello Edge: Keyword Spotting on Microcontrollers", 2017; the MLPerf Tiny
// KWS reference model), trained on the device. One utterance: 49 frames of 10 MFCCs, 12
// classes (10 words, silence, unknown).
//
//   1x1x49x10 -conv1 10x4 stride 2 ("same")-> 1x64x25x5 -bn relu dropout 0.2->
//   4 x [ depthwise 3x3 (groups 64) -bn relu-> pointwise 1x1 64 -bn relu-> ] 1x64x25x5
//   -dropout 0.4-> -global avgpool-> 1x64x1x1 -flatten-> 1x64 -fc-> 1x12
//
// The convolutions have no bias: each is followed by a batchnorm, whose beta is the bias.
// "same" padding of conv1 is TensorFlow's: 9 rows (4 above, 5 below) and 2 columns.
//
// Two functions share the parameters:
// - @loss, the training step's forward: batchnorm in training mode (batch statistics; it
//   returns the updated running statistics, which @loss stores into their non-trainable
//   params) and dropout, whose masks come from adir's counter-based generator with the
//   seed of each dropout and the step the caller passes (%step, one per training step), so
//   the backward pass recomputes them;
// - @predict, inference: batchnorm_eval with the running statistics, no dropout.
//
// Weights use PyTorch's layouts and default initialisation (kaiming_uniform with a = sqrt(5),
// the bound 1/sqrt(fan_in) for the fc bias; batchnorm gamma 1, beta 0, running mean 0 and
// variance 1).
//
//   adir-opt --autodiff examples/ds_cnn.mlir               append @loss_grad
//   adir-opt -p 'autodiff,insert-optimizer{kind=adam lr=0.001}' examples/ds_cnn.mlir
//   adir-run examples/ds_cnn.mlir --func predict --random-inputs 0

adir.param @conv1_w : tensor<64x1x10x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @bn1_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @bn1_beta : tensor<64xf32> = #adir.zeros
adir.param @bn1_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @bn1_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @dw1_w : tensor<64x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 2>
adir.param @dw1_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @dw1_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @dw1_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @dw1_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @pw1_w : tensor<64x64x1x1xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
adir.param @pw1_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @pw1_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @pw1_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @pw1_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @dw2_w : tensor<64x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 4>
adir.param @dw2_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @dw2_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @dw2_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @dw2_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @pw2_w : tensor<64x64x1x1xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 5>
adir.param @pw2_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @pw2_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @pw2_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @pw2_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @dw3_w : tensor<64x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 6>
adir.param @dw3_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @dw3_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @dw3_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @dw3_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @pw3_w : tensor<64x64x1x1xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 7>
adir.param @pw3_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @pw3_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @pw3_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @pw3_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @dw4_w : tensor<64x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 8>
adir.param @dw4_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @dw4_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @dw4_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @dw4_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @pw4_w : tensor<64x64x1x1xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 9>
adir.param @pw4_bn_gamma : tensor<64xf32> = #adir.fill<value = 1.0>
adir.param @pw4_bn_beta : tensor<64xf32> = #adir.zeros
adir.param @pw4_bn_mean : tensor<64xf32> = #adir.zeros {trainable = false}
adir.param @pw4_bn_var : tensor<64xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @fc_w : tensor<12x64xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 10>
adir.param @fc_b : tensor<12xf32> = #adir.uniform<low = -0.125, high = 0.125, seed = 11>

func.func @loss(%x: tensor<1x1x49x10xf32>, %label: tensor<1xi32>, %step: tensor<i64>) -> tensor<f32>
    attributes {adir.loss} {
  %conv1_w = adir.load @conv1_w : tensor<64x1x10x4xf32>
  %c1 = adir.conv2d %x, %conv1_w {stride = array<i64: 2, 2>, padding = array<i64: 4, 5, 1, 1>}
      : tensor<1x1x49x10xf32>, tensor<64x1x10x4xf32> -> tensor<1x64x25x5xf32>
  %bn1_gamma = adir.load @bn1_gamma : tensor<64xf32>
  %bn1_beta = adir.load @bn1_beta : tensor<64xf32>
  %bn1_mean = adir.load @bn1_mean : tensor<64xf32>
  %bn1_var = adir.load @bn1_var : tensor<64xf32>
  %n1, %bn1_batch_mean, %bn1_batch_invstd, %bn1_mean2, %bn1_var2 = adir.batchnorm %c1, %bn1_gamma, %bn1_beta, %bn1_mean, %bn1_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %bn1_mean2, @bn1_mean : tensor<64xf32>
  adir.store %bn1_var2, @bn1_var : tensor<64xf32>
  %a1 = adir.relu %n1 : tensor<1x64x25x5xf32>
  %d1 = adir.dropout %a1, %step {p = 0.2 : f32, seed = 1 : i64} : tensor<1x64x25x5xf32>, tensor<i64> -> tensor<1x64x25x5xf32>
  %dw1_w = adir.load @dw1_w : tensor<64x1x3x3xf32>
  %dw1 = adir.conv2d %d1, %dw1_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw1_bn_gamma = adir.load @dw1_bn_gamma : tensor<64xf32>
  %dw1_bn_beta = adir.load @dw1_bn_beta : tensor<64xf32>
  %dw1_bn_mean = adir.load @dw1_bn_mean : tensor<64xf32>
  %dw1_bn_var = adir.load @dw1_bn_var : tensor<64xf32>
  %dw1_n, %dw1_bn_batch_mean, %dw1_bn_batch_invstd, %dw1_bn_mean2, %dw1_bn_var2 = adir.batchnorm %dw1, %dw1_bn_gamma, %dw1_bn_beta, %dw1_bn_mean, %dw1_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %dw1_bn_mean2, @dw1_bn_mean : tensor<64xf32>
  adir.store %dw1_bn_var2, @dw1_bn_var : tensor<64xf32>
  %dw1_a = adir.relu %dw1_n : tensor<1x64x25x5xf32>
  %pw1_w = adir.load @pw1_w : tensor<64x64x1x1xf32>
  %pw1 = adir.conv2d %dw1_a, %pw1_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw1_bn_gamma = adir.load @pw1_bn_gamma : tensor<64xf32>
  %pw1_bn_beta = adir.load @pw1_bn_beta : tensor<64xf32>
  %pw1_bn_mean = adir.load @pw1_bn_mean : tensor<64xf32>
  %pw1_bn_var = adir.load @pw1_bn_var : tensor<64xf32>
  %pw1_n, %pw1_bn_batch_mean, %pw1_bn_batch_invstd, %pw1_bn_mean2, %pw1_bn_var2 = adir.batchnorm %pw1, %pw1_bn_gamma, %pw1_bn_beta, %pw1_bn_mean, %pw1_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %pw1_bn_mean2, @pw1_bn_mean : tensor<64xf32>
  adir.store %pw1_bn_var2, @pw1_bn_var : tensor<64xf32>
  %pw1_a = adir.relu %pw1_n : tensor<1x64x25x5xf32>
  %dw2_w = adir.load @dw2_w : tensor<64x1x3x3xf32>
  %dw2 = adir.conv2d %pw1_a, %dw2_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw2_bn_gamma = adir.load @dw2_bn_gamma : tensor<64xf32>
  %dw2_bn_beta = adir.load @dw2_bn_beta : tensor<64xf32>
  %dw2_bn_mean = adir.load @dw2_bn_mean : tensor<64xf32>
  %dw2_bn_var = adir.load @dw2_bn_var : tensor<64xf32>
  %dw2_n, %dw2_bn_batch_mean, %dw2_bn_batch_invstd, %dw2_bn_mean2, %dw2_bn_var2 = adir.batchnorm %dw2, %dw2_bn_gamma, %dw2_bn_beta, %dw2_bn_mean, %dw2_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %dw2_bn_mean2, @dw2_bn_mean : tensor<64xf32>
  adir.store %dw2_bn_var2, @dw2_bn_var : tensor<64xf32>
  %dw2_a = adir.relu %dw2_n : tensor<1x64x25x5xf32>
  %pw2_w = adir.load @pw2_w : tensor<64x64x1x1xf32>
  %pw2 = adir.conv2d %dw2_a, %pw2_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw2_bn_gamma = adir.load @pw2_bn_gamma : tensor<64xf32>
  %pw2_bn_beta = adir.load @pw2_bn_beta : tensor<64xf32>
  %pw2_bn_mean = adir.load @pw2_bn_mean : tensor<64xf32>
  %pw2_bn_var = adir.load @pw2_bn_var : tensor<64xf32>
  %pw2_n, %pw2_bn_batch_mean, %pw2_bn_batch_invstd, %pw2_bn_mean2, %pw2_bn_var2 = adir.batchnorm %pw2, %pw2_bn_gamma, %pw2_bn_beta, %pw2_bn_mean, %pw2_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %pw2_bn_mean2, @pw2_bn_mean : tensor<64xf32>
  adir.store %pw2_bn_var2, @pw2_bn_var : tensor<64xf32>
  %pw2_a = adir.relu %pw2_n : tensor<1x64x25x5xf32>
  %dw3_w = adir.load @dw3_w : tensor<64x1x3x3xf32>
  %dw3 = adir.conv2d %pw2_a, %dw3_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw3_bn_gamma = adir.load @dw3_bn_gamma : tensor<64xf32>
  %dw3_bn_beta = adir.load @dw3_bn_beta : tensor<64xf32>
  %dw3_bn_mean = adir.load @dw3_bn_mean : tensor<64xf32>
  %dw3_bn_var = adir.load @dw3_bn_var : tensor<64xf32>
  %dw3_n, %dw3_bn_batch_mean, %dw3_bn_batch_invstd, %dw3_bn_mean2, %dw3_bn_var2 = adir.batchnorm %dw3, %dw3_bn_gamma, %dw3_bn_beta, %dw3_bn_mean, %dw3_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %dw3_bn_mean2, @dw3_bn_mean : tensor<64xf32>
  adir.store %dw3_bn_var2, @dw3_bn_var : tensor<64xf32>
  %dw3_a = adir.relu %dw3_n : tensor<1x64x25x5xf32>
  %pw3_w = adir.load @pw3_w : tensor<64x64x1x1xf32>
  %pw3 = adir.conv2d %dw3_a, %pw3_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw3_bn_gamma = adir.load @pw3_bn_gamma : tensor<64xf32>
  %pw3_bn_beta = adir.load @pw3_bn_beta : tensor<64xf32>
  %pw3_bn_mean = adir.load @pw3_bn_mean : tensor<64xf32>
  %pw3_bn_var = adir.load @pw3_bn_var : tensor<64xf32>
  %pw3_n, %pw3_bn_batch_mean, %pw3_bn_batch_invstd, %pw3_bn_mean2, %pw3_bn_var2 = adir.batchnorm %pw3, %pw3_bn_gamma, %pw3_bn_beta, %pw3_bn_mean, %pw3_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %pw3_bn_mean2, @pw3_bn_mean : tensor<64xf32>
  adir.store %pw3_bn_var2, @pw3_bn_var : tensor<64xf32>
  %pw3_a = adir.relu %pw3_n : tensor<1x64x25x5xf32>
  %dw4_w = adir.load @dw4_w : tensor<64x1x3x3xf32>
  %dw4 = adir.conv2d %pw3_a, %dw4_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw4_bn_gamma = adir.load @dw4_bn_gamma : tensor<64xf32>
  %dw4_bn_beta = adir.load @dw4_bn_beta : tensor<64xf32>
  %dw4_bn_mean = adir.load @dw4_bn_mean : tensor<64xf32>
  %dw4_bn_var = adir.load @dw4_bn_var : tensor<64xf32>
  %dw4_n, %dw4_bn_batch_mean, %dw4_bn_batch_invstd, %dw4_bn_mean2, %dw4_bn_var2 = adir.batchnorm %dw4, %dw4_bn_gamma, %dw4_bn_beta, %dw4_bn_mean, %dw4_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %dw4_bn_mean2, @dw4_bn_mean : tensor<64xf32>
  adir.store %dw4_bn_var2, @dw4_bn_var : tensor<64xf32>
  %dw4_a = adir.relu %dw4_n : tensor<1x64x25x5xf32>
  %pw4_w = adir.load @pw4_w : tensor<64x64x1x1xf32>
  %pw4 = adir.conv2d %dw4_a, %pw4_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw4_bn_gamma = adir.load @pw4_bn_gamma : tensor<64xf32>
  %pw4_bn_beta = adir.load @pw4_bn_beta : tensor<64xf32>
  %pw4_bn_mean = adir.load @pw4_bn_mean : tensor<64xf32>
  %pw4_bn_var = adir.load @pw4_bn_var : tensor<64xf32>
  %pw4_n, %pw4_bn_batch_mean, %pw4_bn_batch_invstd, %pw4_bn_mean2, %pw4_bn_var2 = adir.batchnorm %pw4, %pw4_bn_gamma, %pw4_bn_beta, %pw4_bn_mean, %pw4_bn_var
      : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> (tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  adir.store %pw4_bn_mean2, @pw4_bn_mean : tensor<64xf32>
  adir.store %pw4_bn_var2, @pw4_bn_var : tensor<64xf32>
  %pw4_a = adir.relu %pw4_n : tensor<1x64x25x5xf32>
  %d2 = adir.dropout %pw4_a, %step {p = 0.4 : f32, seed = 2 : i64} : tensor<1x64x25x5xf32>, tensor<i64> -> tensor<1x64x25x5xf32>
  %pool = adir.global_avgpool2d %d2 : tensor<1x64x25x5xf32> -> tensor<1x64x1x1xf32>
  %flat = adir.flatten %pool {start_dim = 1 : i64} : tensor<1x64x1x1xf32> -> tensor<1x64xf32>
  %fc_w = adir.load @fc_w : tensor<12x64xf32>
  %fc_b = adir.load @fc_b : tensor<12xf32>
  %m = adir.matmul %flat, %fc_w {transpose_b} : tensor<1x64xf32>, tensor<12x64xf32> -> tensor<1x12xf32>
  %logits = adir.add %m, %fc_b : tensor<1x12xf32>, tensor<12xf32> -> tensor<1x12xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x12xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

func.func @predict(%x: tensor<1x1x49x10xf32>) -> tensor<1x12xf32> {
  %conv1_w = adir.load @conv1_w : tensor<64x1x10x4xf32>
  %c1 = adir.conv2d %x, %conv1_w {stride = array<i64: 2, 2>, padding = array<i64: 4, 5, 1, 1>}
      : tensor<1x1x49x10xf32>, tensor<64x1x10x4xf32> -> tensor<1x64x25x5xf32>
  %bn1_gamma = adir.load @bn1_gamma : tensor<64xf32>
  %bn1_beta = adir.load @bn1_beta : tensor<64xf32>
  %bn1_mean = adir.load @bn1_mean : tensor<64xf32>
  %bn1_var = adir.load @bn1_var : tensor<64xf32>
  %n1 = adir.batchnorm_eval %c1, %bn1_gamma, %bn1_beta, %bn1_mean, %bn1_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %a1 = adir.relu %n1 : tensor<1x64x25x5xf32>
  %dw1_w = adir.load @dw1_w : tensor<64x1x3x3xf32>
  %dw1 = adir.conv2d %a1, %dw1_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw1_bn_gamma = adir.load @dw1_bn_gamma : tensor<64xf32>
  %dw1_bn_beta = adir.load @dw1_bn_beta : tensor<64xf32>
  %dw1_bn_mean = adir.load @dw1_bn_mean : tensor<64xf32>
  %dw1_bn_var = adir.load @dw1_bn_var : tensor<64xf32>
  %dw1_n = adir.batchnorm_eval %dw1, %dw1_bn_gamma, %dw1_bn_beta, %dw1_bn_mean, %dw1_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %dw1_a = adir.relu %dw1_n : tensor<1x64x25x5xf32>
  %pw1_w = adir.load @pw1_w : tensor<64x64x1x1xf32>
  %pw1 = adir.conv2d %dw1_a, %pw1_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw1_bn_gamma = adir.load @pw1_bn_gamma : tensor<64xf32>
  %pw1_bn_beta = adir.load @pw1_bn_beta : tensor<64xf32>
  %pw1_bn_mean = adir.load @pw1_bn_mean : tensor<64xf32>
  %pw1_bn_var = adir.load @pw1_bn_var : tensor<64xf32>
  %pw1_n = adir.batchnorm_eval %pw1, %pw1_bn_gamma, %pw1_bn_beta, %pw1_bn_mean, %pw1_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %pw1_a = adir.relu %pw1_n : tensor<1x64x25x5xf32>
  %dw2_w = adir.load @dw2_w : tensor<64x1x3x3xf32>
  %dw2 = adir.conv2d %pw1_a, %dw2_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw2_bn_gamma = adir.load @dw2_bn_gamma : tensor<64xf32>
  %dw2_bn_beta = adir.load @dw2_bn_beta : tensor<64xf32>
  %dw2_bn_mean = adir.load @dw2_bn_mean : tensor<64xf32>
  %dw2_bn_var = adir.load @dw2_bn_var : tensor<64xf32>
  %dw2_n = adir.batchnorm_eval %dw2, %dw2_bn_gamma, %dw2_bn_beta, %dw2_bn_mean, %dw2_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %dw2_a = adir.relu %dw2_n : tensor<1x64x25x5xf32>
  %pw2_w = adir.load @pw2_w : tensor<64x64x1x1xf32>
  %pw2 = adir.conv2d %dw2_a, %pw2_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw2_bn_gamma = adir.load @pw2_bn_gamma : tensor<64xf32>
  %pw2_bn_beta = adir.load @pw2_bn_beta : tensor<64xf32>
  %pw2_bn_mean = adir.load @pw2_bn_mean : tensor<64xf32>
  %pw2_bn_var = adir.load @pw2_bn_var : tensor<64xf32>
  %pw2_n = adir.batchnorm_eval %pw2, %pw2_bn_gamma, %pw2_bn_beta, %pw2_bn_mean, %pw2_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %pw2_a = adir.relu %pw2_n : tensor<1x64x25x5xf32>
  %dw3_w = adir.load @dw3_w : tensor<64x1x3x3xf32>
  %dw3 = adir.conv2d %pw2_a, %dw3_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw3_bn_gamma = adir.load @dw3_bn_gamma : tensor<64xf32>
  %dw3_bn_beta = adir.load @dw3_bn_beta : tensor<64xf32>
  %dw3_bn_mean = adir.load @dw3_bn_mean : tensor<64xf32>
  %dw3_bn_var = adir.load @dw3_bn_var : tensor<64xf32>
  %dw3_n = adir.batchnorm_eval %dw3, %dw3_bn_gamma, %dw3_bn_beta, %dw3_bn_mean, %dw3_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %dw3_a = adir.relu %dw3_n : tensor<1x64x25x5xf32>
  %pw3_w = adir.load @pw3_w : tensor<64x64x1x1xf32>
  %pw3 = adir.conv2d %dw3_a, %pw3_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw3_bn_gamma = adir.load @pw3_bn_gamma : tensor<64xf32>
  %pw3_bn_beta = adir.load @pw3_bn_beta : tensor<64xf32>
  %pw3_bn_mean = adir.load @pw3_bn_mean : tensor<64xf32>
  %pw3_bn_var = adir.load @pw3_bn_var : tensor<64xf32>
  %pw3_n = adir.batchnorm_eval %pw3, %pw3_bn_gamma, %pw3_bn_beta, %pw3_bn_mean, %pw3_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %pw3_a = adir.relu %pw3_n : tensor<1x64x25x5xf32>
  %dw4_w = adir.load @dw4_w : tensor<64x1x3x3xf32>
  %dw4 = adir.conv2d %pw3_a, %dw4_w {padding = array<i64: 1, 1, 1, 1>, groups = 64 : i64}
      : tensor<1x64x25x5xf32>, tensor<64x1x3x3xf32> -> tensor<1x64x25x5xf32>
  %dw4_bn_gamma = adir.load @dw4_bn_gamma : tensor<64xf32>
  %dw4_bn_beta = adir.load @dw4_bn_beta : tensor<64xf32>
  %dw4_bn_mean = adir.load @dw4_bn_mean : tensor<64xf32>
  %dw4_bn_var = adir.load @dw4_bn_var : tensor<64xf32>
  %dw4_n = adir.batchnorm_eval %dw4, %dw4_bn_gamma, %dw4_bn_beta, %dw4_bn_mean, %dw4_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %dw4_a = adir.relu %dw4_n : tensor<1x64x25x5xf32>
  %pw4_w = adir.load @pw4_w : tensor<64x64x1x1xf32>
  %pw4 = adir.conv2d %dw4_a, %pw4_w : tensor<1x64x25x5xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x25x5xf32>
  %pw4_bn_gamma = adir.load @pw4_bn_gamma : tensor<64xf32>
  %pw4_bn_beta = adir.load @pw4_bn_beta : tensor<64xf32>
  %pw4_bn_mean = adir.load @pw4_bn_mean : tensor<64xf32>
  %pw4_bn_var = adir.load @pw4_bn_var : tensor<64xf32>
  %pw4_n = adir.batchnorm_eval %pw4, %pw4_bn_gamma, %pw4_bn_beta, %pw4_bn_mean, %pw4_bn_var : tensor<1x64x25x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x25x5xf32>
  %pw4_a = adir.relu %pw4_n : tensor<1x64x25x5xf32>
  %pool = adir.global_avgpool2d %pw4_a : tensor<1x64x25x5xf32> -> tensor<1x64x1x1xf32>
  %flat = adir.flatten %pool {start_dim = 1 : i64} : tensor<1x64x1x1xf32> -> tensor<1x64xf32>
  %fc_w = adir.load @fc_w : tensor<12x64xf32>
  %fc_b = adir.load @fc_b : tensor<12xf32>
  %m = adir.matmul %flat, %fc_w {transpose_b} : tensor<1x64xf32>, tensor<12x64xf32> -> tensor<1x12xf32>
  %logits = adir.add %m, %fc_b : tensor<1x12xf32>, tensor<12xf32> -> tensor<1x12xf32>
  func.return %logits : tensor<1x12xf32>
}
