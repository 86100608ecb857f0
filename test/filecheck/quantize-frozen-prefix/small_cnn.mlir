// quantize-frozen-prefix: the frozen conv (batchnorm and relu folded in), the maxpool and the
// reshape run on int8 kernels in @train_step and in @loss; one dequantize feeds the trained
// classifier (its matmul, bias add and backward stay f32). The float conv, batchnorm
// parameters are gone (no function loads them: their int8 forms are constants); the trained
// fc_w and fc_b stay. Calibration: 4 standard-normal inputs, seed 0.
// RUN: adir-opt %s -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.125},quantize-frozen-prefix{samples=4}' | filecheck %s
// Deterministic: the same pipeline twice gives the same bytes.
// RUN: adir-opt %s -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.125},quantize-frozen-prefix{samples=4}' > %t.1
// RUN: adir-opt %s -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.125},quantize-frozen-prefix{samples=4}' > %t.2
// RUN: diff %t.1 %t.2
// The shortcut flag: --quantize-frozen runs the pass after insert-optimizer, and the rest of
// the pipeline plans the int8 prefix's kernels (32 calibration inputs by default).
// RUN: adir-opt %s --optimizer=sgd --lr=0.125 --quantize-frozen --plan-memory | filecheck %s --check-prefix=FLAG
// RUN: not adir-opt %s --quantize-frozen 2>&1 | filecheck %s --check-prefix=NEEDS
// Without a training step: a located error.
// RUN: not adir-opt %s -p 'quantize-frozen-prefix' 2>&1 | filecheck %s --check-prefix=NOSTEP

adir.param @conv_w : tensor<2x1x3x3xf32> = dense<[[[[0.5, -0.25, 0.125], [1.0, 0.0, -1.0], [0.25, 0.5, -0.5]]], [[[-0.75, 0.25, 0.0], [0.5, 0.5, 0.5], [-0.125, 1.0, 0.25]]]]> : tensor<2x1x3x3xf32> {trainable = false}
adir.param @conv_b : tensor<2xf32> = dense<[0.1, -0.2]> : tensor<2xf32> {trainable = false}
adir.param @bn_gamma : tensor<2xf32> = dense<[1.0, 0.5]> : tensor<2xf32> {trainable = false}
adir.param @bn_beta : tensor<2xf32> = dense<[0.1, -0.1]> : tensor<2xf32> {trainable = false}
adir.param @bn_mean : tensor<2xf32> = dense<[0.0, 0.2]> : tensor<2xf32> {trainable = false}
adir.param @bn_var : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32> {trainable = false}
adir.param @fc_w : tensor<3x8xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
adir.param @fc_b : tensor<3xf32> = #adir.uniform<low = -0.1, high = 0.1, seed = 4>

func.func @loss(%x: tensor<1x1x6x6xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.loss} {
  %conv_w = adir.load @conv_w : tensor<2x1x3x3xf32>
  %conv_b = adir.load @conv_b : tensor<2xf32>
  %c = adir.conv2d %x, %conv_w, %conv_b : tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %g = adir.load @bn_gamma : tensor<2xf32>
  %b = adir.load @bn_beta : tensor<2xf32>
  %m = adir.load @bn_mean : tensor<2xf32>
  %v = adir.load @bn_var : tensor<2xf32>
  %n = adir.batchnorm_eval %c, %g, %b, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %a = adir.relu %n : tensor<1x2x4x4xf32>
  %p = adir.maxpool2d %a {kernel_size = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %flat = adir.reshape %p {shape = array<i64: 1, 8>} : tensor<1x2x2x2xf32> -> tensor<1x8xf32>
  %fc_w = adir.load @fc_w : tensor<3x8xf32>
  %fc_b = adir.load @fc_b : tensor<3xf32>
  %mm = adir.matmul %flat, %fc_w {transpose_b} : tensor<1x8xf32>, tensor<3x8xf32> -> tensor<1x3xf32>
  %h = adir.add %mm, %fc_b : tensor<1x3xf32>, tensor<3xf32> -> tensor<1x3xf32>
  %logp = adir.log_softmax %h : tensor<1x3xf32>
  %loss = adir.nll %logp, %label : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   adir.param @fc_w : tensor<3x8xf32>
// CHECK-NEXT:   adir.param @fc_b : tensor<3xf32>
// CHECK-NEXT:   func.func @loss({{.*}} attributes {adir.loss, adir.quantized_prefix = "int8"} {
// CHECK:        func.func @train_step(%x: tensor<1x1x6x6xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.optimizer = "sgd", adir.quantized_prefix = "int8"} {
// CHECK-NEXT:     %x_1 = adir.quantize %x {scale = 0.0171282217 : f32, zero_point = 10 : i32} : tensor<1x1x6x6xf32> -> tensor<1x1x6x6xi8>
// CHECK-NEXT:     %0 = adir.qreshape %x_1 {shape = array<i64: 1, 6, 6, 1>}
// CHECK-NEXT:     %1 = adir.constant dense<{{.*}}> : tensor<2x3x3x1xi8>
// CHECK-NEXT:     %2 = adir.constant dense<[1483, -5063]> : tensor<2xi32>
// CHECK-NEXT:     %a = adir.qconv2d %0, %1, %2 {input_zero_point = 10 : i32, output_zero_point = -128 : i32, multiplier = array<i32: 1527513492, 1080117728>, shift = array<i32: -6, -7>}
// CHECK-NEXT:     %p = adir.qmaxpool2d %a
// CHECK-NEXT:     %3 = adir.qtranspose %p {permutation = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:     %flat = adir.qreshape %3 {shape = array<i64: 1, 8>}
// CHECK-NEXT:     %flat_1 = adir.dequantize %flat {scale = 0.0121347597 : f32, zero_point = -128 : i32} : tensor<1x8xi8> -> tensor<1x8xf32>
// CHECK-NEXT:     %fc_w = adir.load @fc_w
// CHECK-NEXT:     %mm = adir.matmul %flat_1, %fc_w {transpose_b}
// CHECK:          %fc_w_grad = adir.matmul %h_grad, %flat_1 {transpose_a}
// CHECK-NOT:      adir.conv2d
// CHECK:          func.return %loss : tensor<f32>

// NOSTEP: small_cnn.mlir: error: quantize-frozen-prefix: no function @train_step (run insert-optimizer first)

// FLAG:      func.func @train_step({{.*}} attributes {{{.*}}adir.quantized_prefix = "int8"{{.*}}} {
// FLAG:        adir_kernel.qconv2d
// FLAG:        adir_kernel.dequantize
// FLAG-NOT:    adir_kernel.conv2d
// FLAG:        func.return
// NEEDS: adir-opt: error: --quantize-frozen needs --optimizer
