// The activations' VJP rules each emit one gradient op. sigmoid's (like tanh's, softmax's and
// log_softmax's) reads the saved output; relu's reads the output too, so the pre-activation is
// not kept for the backward pass; gelu's (like leaky_relu's and softplus's) reads the input.
// The forward op's properties are copied.
// RUN: adir-opt %s --split-input-file -p 'autodiff{wrt_args=0}' | filecheck %s

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

// CHECK-LABEL: func.func @sigmoid_grad(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<3x4xf32>, tensor<2x3xf32>)
// CHECK:         %a = adir.sigmoid %h : tensor<2x4xf32>
// CHECK:         %[[DH:.*]] = adir.sigmoid_grad %a, %{{.*}} : tensor<2x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = adir.matmul %[[DH]], %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DW:.*]] = adir.matmul %x, %[[DH]] {transpose_a} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %l, %[[DW]], %[[DX]] : tensor<f32>, tensor<3x4xf32>, tensor<2x3xf32>
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %h = adir.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %a = adir.sigmoid %h : tensor<2x4xf32>
  %l = adir.sum %a : tensor<2x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @w1 : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @w2 : tensor<4x2xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 2>

// After the forward relu, nothing reads the pre-activation %h.
// CHECK-LABEL: func.func @relu_grad
// CHECK:         %a = adir.relu %h : tensor<2x4xf32>
// CHECK-NOT:     {{%h[^_]}}
// CHECK:         %[[DA:.*]] = adir.matmul %{{.*}}, %w2 {transpose_b} : tensor<2x2xf32>, tensor<4x2xf32> -> tensor<2x4xf32>
// CHECK:         %[[DH:.*]] = adir.relu_grad %a, %[[DA]] : tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = adir.matmul %[[DH]], %w1 {transpose_b}
// CHECK-NOT:     {{%h[^_]}}
// CHECK:         func.return
func.func @relu(%x: tensor<2x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<3x4xf32>
  %h = adir.matmul %x, %w1 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %a = adir.relu %h : tensor<2x4xf32>
  %w2 = adir.load @w2 : tensor<4x2xf32>
  %o = adir.matmul %a, %w2 : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %l = adir.sum %o : tensor<2x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @gelu_grad
// CHECK:         %[[DX:.*]] = adir.gelu_grad %x, %{{.*}} {approximate = "tanh"} : tensor<2x3xf32>
// CHECK-NEXT:    func.return %l, %[[DX]] : tensor<f32>, tensor<2x3xf32>
func.func @gelu(%x: tensor<2x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %a = adir.gelu %x {approximate = "tanh"} : tensor<2x3xf32>
  %l = adir.sum %a : tensor<2x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @log_softmax_grad
// CHECK:         %[[DX:.*]] = adir.log_softmax_grad %p, %{{.*}} {axis = 0 : i64} : tensor<2x3xf32>
// CHECK-NEXT:    func.return %l, %[[DX]] : tensor<f32>, tensor<2x3xf32>
func.func @log_softmax(%x: tensor<2x3xf32>, %r: tensor<2x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %p = adir.log_softmax %x {axis = 0 : i64} : tensor<2x3xf32>
  %q = adir.mul %p, %r : tensor<2x3xf32>
  %l = adir.sum %q : tensor<2x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @w1 : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

adir.param @w2 : tensor<4x2xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 2>

// ReLU6 saves one value, its output, as relu does: nothing reads the pre-activation %h after
// the forward clamp. torch.clamp's gradient (`inclusive`) needs the input, %a here, and saves
// only that. hardswish's reads its input.
// CHECK-LABEL: func.func @clamps_grad
// CHECK:         %a = adir.clamp %h {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x4xf32>
// CHECK-NOT:     {{%h[^_]}}
// CHECK:         %b = adir.clamp %a {min = 1.000000e+00 : f32, inclusive} : tensor<2x4xf32>
// CHECK:         %s = adir.hardswish %b : tensor<2x4xf32>
// CHECK:         %[[DS:.*]] = adir.matmul %{{.*}}, %w2 {transpose_b} : tensor<2x2xf32>, tensor<4x2xf32> -> tensor<2x4xf32>
// CHECK:         %[[DB:.*]] = adir.hardswish_grad %b, %[[DS]] : tensor<2x4xf32>
// CHECK-NEXT:    %[[DA:.*]] = adir.clamp_grad %a, %[[DB]] {min = 1.000000e+00 : f32, inclusive} : tensor<2x4xf32>
// CHECK-NEXT:    %[[DH:.*]] = adir.clamp_grad %a, %[[DA]] {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = adir.matmul %[[DH]], %w1 {transpose_b}
// CHECK-NOT:     {{%h[^_]}}
// CHECK:         func.return
func.func @clamps(%x: tensor<2x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<3x4xf32>
  %h = adir.matmul %x, %w1 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %a = adir.clamp %h {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x4xf32>
  %b = adir.clamp %a {min = 1.0 : f32, inclusive} : tensor<2x4xf32>
  %s = adir.hardswish %b : tensor<2x4xf32>
  %w2 = adir.load @w2 : tensor<4x2xf32>
  %o = adir.matmul %s, %w2 : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %l = adir.sum %o : tensor<2x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
