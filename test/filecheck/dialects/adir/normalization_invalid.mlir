// Every verifier rule of the normalization family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// batchnorm normalises the channels (dim 1) of [N, C, ...].
func.func @batchnorm_rank(%x: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:6:3: error: adir.batchnorm: operand input must have rank 2 or more ([N, C, ...]), got rank 1 (4)

// -----

func.func @batchnorm_gamma_rank(%x: tensor<8x4x5x5xf32>, %g: tensor<1x4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:14:3: error: adir.batchnorm: operand gamma must have rank 1, got rank 2 (1x4)

// -----

func.func @batchnorm_gamma_size(%x: tensor<8x4x5x5xf32>, %g: tensor<3xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:22:3: error: adir.batchnorm: operand gamma has 3 entries but input has 4 channels

// -----

func.func @batchnorm_beta_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<5xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:30:3: error: adir.batchnorm: operand beta has 5 entries but input has 4 channels

// -----

func.func @batchnorm_running_mean_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<8xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:38:3: error: adir.batchnorm: operand running_mean has 8 entries but input has 4 channels

// -----

func.func @batchnorm_running_var_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<2xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:46:3: error: adir.batchnorm: operand running_var has 2 entries but input has 4 channels

// -----

// Where the input's channel count is unknown, the per-channel operands must agree.
func.func @batchnorm_channels_from_gamma(%x: tensor<8x?xf32>, %g: tensor<3xf32>, %b: tensor<*xf32>, %m: tensor<?xf32>, %v: tensor<5xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x?xf32>, tensor<3xf32>, tensor<*xf32>, tensor<?xf32>, tensor<5xf32> -> (tensor<8x?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:55:3: error: adir.batchnorm: operand running_var has 5 entries but operand gamma has 3 entries

// -----

func.func @batchnorm_momentum_above_1(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v {momentum = 1.5 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:63:3: error: adir.batchnorm: momentum must be in [0, 1], got 1.5

// -----

func.func @batchnorm_momentum_negative(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v {momentum = -0.25 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:71:3: error: adir.batchnorm: momentum must be in [0, 1], got -0.25

// -----

func.func @batchnorm_eps_negative(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v {eps = -1.0 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:79:3: error: adir.batchnorm: eps must not be negative, got -1.0

// -----

// One value per channel has no unbiased variance (PyTorch: "Expected more than 1 value per
// channel when training").
func.func @batchnorm_one_value_per_channel(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:89:3: error: adir.batchnorm: input (1x4) has 1 value per channel; training needs at least 2 (the running variance is unbiased, a sum over M - 1)

// -----

func.func @batchnorm_one_value_per_channel_nchw(%x: tensor<1x4x1x1xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<1x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<1x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:97:3: error: adir.batchnorm: input (1x4x1x1) has 1 value per channel; training needs at least 2 (the running variance is unbiased, a sum over M - 1)

// -----

func.func @batchnorm_result_stats(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:105:3: error: adir.batchnorm: result #1 type tensor<5xf32> does not match the type tensor<4xf32> implied by its operands and properties

// -----

func.func @batchnorm_result_output(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:113:3: error: adir.batchnorm: result #0 type tensor<8x4x5x4xf32> does not match the type tensor<8x4x5x5xf32> implied by its operands and properties

// -----

func.func @batchnorm_int_input(%x: tensor<8x4xi32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y:5 = adir.batchnorm %x, %g, %b, %m, %v : tensor<8x4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:121:3: error: adir.batchnorm: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

// batchnorm_eval has the same rules, but one value per channel is fine.
func.func @batchnorm_eval_rank(%x: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y = adir.batchnorm_eval %x, %g, %b, %m, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:130:3: error: adir.batchnorm_eval: operand input must have rank 2 or more ([N, C, ...]), got rank 1 (4)

// -----

func.func @batchnorm_eval_running_mean_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<3xf32>, %v: tensor<4xf32>) {
  %y = adir.batchnorm_eval %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32> -> tensor<8x4x5x5xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:138:3: error: adir.batchnorm_eval: operand running_mean has 3 entries but input has 4 channels

// -----

func.func @batchnorm_eval_eps_negative(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y = adir.batchnorm_eval %x, %g, %b, %m, %v {eps = -1.0e-05 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5x5xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:146:3: error: adir.batchnorm_eval: eps must not be negative, got -9.999999747378752e-06

// -----

func.func @batchnorm_eval_result(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  %y = adir.batchnorm_eval %x, %g, %b, %m, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:154:3: error: adir.batchnorm_eval: result type tensor<8x4x5xf32> does not match the type tensor<8x4x5x5xf32> implied by its operands and properties

// -----

func.func @batchnorm_grad_mean_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %m: tensor<3xf32>, %s: tensor<4xf32>, %dy: tensor<8x4x5x5xf32>) {
  %r:3 = adir.batchnorm_grad %x, %g, %m, %s, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:162:3: error: adir.batchnorm_grad: operand batch_mean has 3 entries but input has 4 channels

// -----

func.func @batchnorm_grad_invstd_rank(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %s: tensor<4x1xf32>, %dy: tensor<8x4x5x5xf32>) {
  %r:3 = adir.batchnorm_grad %x, %g, %m, %s, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x1xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:170:3: error: adir.batchnorm_grad: operand batch_invstd must have rank 1, got rank 2 (4x1)

// -----

func.func @batchnorm_grad_grad_shape(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %s: tensor<4xf32>, %dy: tensor<8x4x5x6xf32>) {
  %r:3 = adir.batchnorm_grad %x, %g, %m, %s, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x6xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:178:3: error: adir.batchnorm_grad: operands input (8x4x5x5) and grad (8x4x5x6) must have the same shape

// -----

func.func @batchnorm_grad_result(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %s: tensor<4xf32>, %dy: tensor<8x4x5x5xf32>) {
  %r:3 = adir.batchnorm_grad %x, %g, %m, %s, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<3xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:186:3: error: adir.batchnorm_grad: result #2 type tensor<3xf32> does not match the type tensor<4xf32> implied by its operands and properties

// -----

// dropout: p is a probability.
func.func @dropout_p_above_1(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout %x, %s {p = 1.5 : f32, seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:195:3: error: adir.dropout: p must be in [0, 1], got 1.5

// -----

func.func @dropout_p_negative(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout %x, %s {p = -0.5 : f32, seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:203:3: error: adir.dropout: p must be in [0, 1], got -0.5

// -----

// The seed has no default: two dropouts with one seed would drop the same elements.
func.func @dropout_missing_seed(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout %x, %s {p = 0.5 : f32} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:212:3: error: adir.dropout: property 'seed' expected in operation 'adir.dropout'

// -----

func.func @dropout_seed_negative(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout %x, %s {seed = -3 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:220:3: error: adir.dropout: seed must not be negative, got -3

// -----

// The step is one number.
func.func @dropout_step_not_scalar(%x: tensor<8x32xf32>, %s: tensor<1xi64>) {
  %y = adir.dropout %x, %s {seed = 7 : i64} : tensor<8x32xf32>, tensor<1xi64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:229:3: error: adir.dropout: operand step must be a tensor<i32>, tensor<i64> or tensor<f32> scalar, got tensor<1xi64>

// -----

func.func @dropout_step_i16(%x: tensor<8x32xf32>, %s: tensor<i16>) {
  %y = adir.dropout %x, %s {seed = 7 : i64} : tensor<8x32xf32>, tensor<i16> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:237:3: error: adir.dropout: operand step must be a tensor<i32>, tensor<i64> or tensor<f32> scalar, got tensor<i16>

// -----

func.func @dropout_step_f64(%x: tensor<8x32xf32>, %s: tensor<f64>) {
  %y = adir.dropout %x, %s {seed = 7 : i64} : tensor<8x32xf32>, tensor<f64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:245:3: error: adir.dropout: operand step must be a tensor<i32>, tensor<i64> or tensor<f32> scalar, got tensor<f64>

// -----

func.func @dropout_result(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout %x, %s {seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x33xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:253:3: error: adir.dropout: result type tensor<8x33xf32> does not match the type tensor<8x32xf32> implied by its operands and properties

// -----

func.func @dropout_grad_p(%x: tensor<8x32xf32>, %s: tensor<i64>) {
  %y = adir.dropout_grad %x, %s {p = 2.0 : f32, seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:261:3: error: adir.dropout_grad: p must be in [0, 1], got 2.0

// -----

func.func @dropout_grad_step(%x: tensor<8x32xf32>, %s: tensor<2xf32>) {
  %y = adir.dropout_grad %x, %s {seed = 7 : i64} : tensor<8x32xf32>, tensor<2xf32> -> tensor<8x32xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:269:3: error: adir.dropout_grad: operand step must be a tensor<i32>, tensor<i64> or tensor<f32> scalar, got tensor<2xf32>

// -----

func.func @batchnorm_relu_grad_beta_size(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<3xf32>, %dy: tensor<8x4x5x5xf32>) {
  %r:3 = adir.batchnorm_relu_grad %x, %g, %b, %g, %g, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:277:3: error: adir.batchnorm_relu_grad: operand beta has 3 entries but input has 4 channels

// -----

func.func @batchnorm_relu_grad_shape(%x: tensor<8x4x5x5xf32>, %g: tensor<4xf32>, %dy: tensor<8x4x5x4xf32>) {
  %r:3 = adir.batchnorm_relu_grad %x, %g, %g, %g, %g, %dy : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:285:3: error: adir.batchnorm_relu_grad: operands input (8x4x5x5) and grad (8x4x5x4) must have the same shape

// -----

func.func @batchnorm_relu_one_value(%x: tensor<1x4xf32>, %g: tensor<4xf32>) {
  %r:5 = adir.batchnorm_relu %x, %g, %g, %g, %g : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: normalization_invalid.mlir:293:3: error: adir.batchnorm_relu: input (1x4) has 1 value per channel; training needs at least 2 (the running variance is unbiased, a sum over M - 1)
