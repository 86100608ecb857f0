// Every verifier rule of the params family, one case per split. (Rules that the parser
// enforces, such as an initializer's own parameters, are in params_parse_errors.mlir.)
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

adir.param @dynamic : tensor<?x3xf32> = #adir.zeros
// CHECK: params_invalid.mlir:5:1: error: adir.param @dynamic: the type tensor<?x3xf32> must have a static shape

// -----

adir.param @integers : tensor<4xi16> = dense<1> : tensor<4xi16>
// CHECK: params_invalid.mlir:10:1: error: adir.param @integers: the type tensor<4xi16> must have f32 elements, or i8 or i32 (the int8 weights and int32 biases of a trainable int8 layer)

// -----

adir.param @f64_data : tensor<2x3xf32> = dense<1.0> : tensor<2x3xf64>
// CHECK: params_invalid.mlir:15:1: error: adir.param @f64_data: initial data of type tensor<2x3xf64> does not match the type tensor<2x3xf32>

// -----

adir.param @transposed_data : tensor<3x2xf32> = dense<1.0> : tensor<2x3xf32>
// CHECK: params_invalid.mlir:20:1: error: adir.param @transposed_data: initial data of type tensor<2x3xf32> does not match the type tensor<3x2xf32>

// -----

adir.param @bias : tensor<32xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
// CHECK: params_invalid.mlir:25:1: error: adir.param @bias: adir.kaiming_uniform needs a tensor of rank 2 or more, got tensor<32xf32>

// -----

adir.param @scale : tensor<f32> = #adir.xavier_uniform<seed = 1>
// CHECK: params_invalid.mlir:30:1: error: adir.param @scale: adir.xavier_uniform needs a tensor of rank 2 or more, got tensor<f32>

// -----

adir.param @float_attr : tensor<f32> = 0.5 : f32
// CHECK: params_invalid.mlir:35:1: error: adir.param @float_attr: the initial value must be dense data or an initializer (#adir.zeros, #adir.uniform<...>, ...), got 5.000000e-01 : f32

// -----

func.func @nested() {
  adir.param @local : tensor<3xf32> = #adir.zeros
  func.return
}
// CHECK: params_invalid.mlir:41:3: error: adir.param: 'adir.param' expects parent op 'builtin.module'

// -----

func.func @load_unknown() {
  %0 = adir.load @missing : tensor<3xf32>
  func.return
}
// CHECK: params_invalid.mlir:49:3: error: adir.load: no adir.param named @missing in the module

// -----

func.func @load_function() {
  %0 = adir.load @load_function : tensor<3xf32>
  func.return
}
// CHECK: params_invalid.mlir:57:3: error: adir.load: @load_function is a func.func, not an adir.param

// -----

adir.param @w : tensor<2x3xf32> = #adir.zeros
func.func @load_transposed() {
  %0 = adir.load @w : tensor<3x2xf32>
  func.return
}
// CHECK: params_invalid.mlir:66:3: error: adir.load: result type tensor<3x2xf32> does not match @w of type tensor<2x3xf32>

// -----

adir.param @w : tensor<2x3xf32> = #adir.zeros
func.func @load_integers() {
  %0 = adir.load @w : tensor<2x3xi32>
  func.return
}
// CHECK: params_invalid.mlir:75:3: error: adir.load: result type tensor<2x3xi32> does not match @w of type tensor<2x3xf32>

// -----

func.func @store_unknown(%v: tensor<3xf32>) {
  adir.store %v, @missing : tensor<3xf32>
  func.return
}
// CHECK: params_invalid.mlir:83:3: error: adir.store: no adir.param named @missing in the module

// -----

func.func @store_function(%v: tensor<3xf32>) {
  adir.store %v, @store_function : tensor<3xf32>
  func.return
}
// CHECK: params_invalid.mlir:91:3: error: adir.store: @store_function is a func.func, not an adir.param

// -----

adir.param @w : tensor<2x3xf32> = #adir.zeros
func.func @store_transposed(%v: tensor<3x2xf32>) {
  adir.store %v, @w : tensor<3x2xf32>
  func.return
}
// CHECK: params_invalid.mlir:100:3: error: adir.store: value of type tensor<3x2xf32> does not match @w of type tensor<2x3xf32>

// -----

adir.param @w : tensor<3xf32> = #adir.zeros
func.func @store_integers(%v: tensor<3xi32>) {
  adir.store %v, @w : tensor<3xi32>
  func.return
}
// CHECK: params_invalid.mlir:109:3: error: adir.store: value of type tensor<3xi32> does not match @w of type tensor<3xf32>

// -----

// An int8 weight is the quantizer's data: no initializer draws integers.
adir.param @int8_drawn : tensor<4x4xi8> = #adir.zeros
// CHECK: error: adir.param @int8_drawn: an integer parameter needs dense data
