// The verifier's rules for update_fraction / update_channels on adir.param, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY

// VERIFY: params_partial_update_invalid.mlir:5:1: error: {{.*}}adir.param @w: update_fraction 1.5 must be in (0, 1]
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_fraction = 1.5 : f32}

// -----
// VERIFY: error: {{.*}}adir.param @w: update_fraction must be an f32, got 2.500000e-01 : f64
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_fraction = 0.25 : f64}

// -----
// VERIFY: error: {{.*}}adir.param @b: update_fraction needs a conv or linear weight (rank 2 or more, output channels first), not tensor<4xf32>
adir.param @b : tensor<4xf32> = dense<1.0> : tensor<4xf32> {update_fraction = 0.5 : f32}

// -----
// VERIFY: error: {{.*}}adir.param @w: update_channels 5 must be in [1, 4] (the output channels of the weight)
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_channels = 5 : i64}

// -----
// VERIFY: error: {{.*}}adir.param @w: give update_fraction or update_channels, not both
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_fraction = 0.5 : f32, update_channels = 2 : i64}

// -----
// VERIFY: error: {{.*}}adir.param @w: update_channels on a parameter marked {trainable = false}
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_channels = 2 : i64, trainable = false}

