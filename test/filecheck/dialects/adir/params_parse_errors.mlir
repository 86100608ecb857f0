// What the parser rejects in adir.param: an initializer's parameters (unknown, repeated,
// missing, of the wrong kind, or out of range; an initializer verifies as it is parsed, so its
// errors point at it) and a type that is not a ranked tensor. One case per split; with
// --parsing-diagnostics a parse error is reported and the next split still runs.
// RUN: adir-opt %s --split-input-file --parsing-diagnostics | filecheck %s

adir.param @w : tensor<3xf32> = #adir.uniform<low = 0.0, hi = 1.0, seed = 1>
// CHECK: params_parse_errors.mlir:7:58: error: adir.uniform: unknown parameter 'hi', expected one of low, high, seed

// -----

adir.param @w : tensor<3x3xf32> = #adir.kaiming_uniform<seed = 1, seed = 2>
// CHECK: params_parse_errors.mlir:12:67: error: adir.kaiming_uniform: parameter 'seed' is given twice

// -----

adir.param @w : tensor<3xf32> = #adir.fill
// CHECK: params_parse_errors.mlir:17:33: error: adir.fill: missing parameter 'value'

// -----

adir.param @w : tensor<3x3xf32> = #adir.kaiming_uniform<mode = 3, seed = 1>
// CHECK: params_parse_errors.mlir:22:64: error: adir.kaiming_uniform: 'mode' must be an identifier

// -----

adir.param @w : tensor<3x3xf32> = #adir.xavier_uniform<seed = 1.5>
// CHECK: params_parse_errors.mlir:27:63: error: adir.xavier_uniform: 'seed' must be an integer

// -----

adir.param @w : tensor<3xf32> = #adir.normal<std = "wide", seed = 1>
// CHECK: params_parse_errors.mlir:32:52: error: adir.normal: 'std' must be a number

// -----

adir.param @w : tensor<3xf32> = #adir.uniform<low = 1.0, high = 1.0, seed = 1>
// CHECK: params_parse_errors.mlir:37:33: error: adir.uniform: low 1.0 must be less than high 1.0

// -----

"adir.param"() <{sym_name = "w", type = tensor<3xf32>, initial_value = #adir.uniform<low = 0.5, high = -0.5, seed = 1>}> : () -> ()
// CHECK: params_parse_errors.mlir:42:72: error: adir.uniform: low 0.5 must be less than high -0.5

// -----

adir.param @w : tensor<3xf32> = #adir.normal<std = -0.5, seed = 1>
// CHECK: params_parse_errors.mlir:47:33: error: adir.normal: std -0.5 must not be negative

// -----

adir.param @w : tensor<3x3xf32> = #adir.kaiming_uniform<mode = fan_avg, seed = 1>
// CHECK: params_parse_errors.mlir:52:35: error: adir.kaiming_uniform: mode 'fan_avg' must be fan_in or fan_out

// -----

adir.param @w : tensor<3x3xf32> = #adir.xavier_uniform<seed = 18446744073709551616>
// CHECK: params_parse_errors.mlir:57:35: error: adir.xavier_uniform: seed 18446744073709551616 must be in [0, 2^64)

// -----

adir.param @w : tensor<3xf32> = #adir.uniform<seed = -1>
// CHECK: params_parse_errors.mlir:62:33: error: adir.uniform: seed -1 must be in [0, 2^64)

// -----

adir.param @w : tensor<*xf32> = #adir.zeros
// CHECK: params_parse_errors.mlir:67:17: error: adir.param: expected a ranked tensor type, got tensor<*xf32>

// -----

adir.param @w : f32 = #adir.zeros
// CHECK: params_parse_errors.mlir:72:17: error: adir.param: expected a ranked tensor type, got f32
