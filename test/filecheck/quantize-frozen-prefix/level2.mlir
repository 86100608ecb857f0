// quantize-frozen-prefix{level=2}: small_cnn.mlir's model, whose classifier trains, becomes an
// int8 layer before autodiff: the float fc_w and fc_b are gone, replaced by an i8 weight and an
// i32 bias carrying QAS's step scales (s_W^-2 for the weight, (s_x s_W)^-2 for the bias, one a
// channel); autodiff differentiates the qfully_connected through its requantization
// (qrequantize_grad), and insert-optimizer updates the integers with qsgd_update. With
// qas=false the step scales are 1. Calibration: 4 standard-normal inputs, seed 0.
// RUN: adir-opt %s -p 'infer-shapes,quantize-frozen-prefix{level=2 samples=4},autodiff,insert-optimizer{kind=sgd lr=0.125}' | filecheck %s
// RUN: adir-opt %s -p 'infer-shapes,quantize-frozen-prefix{level=2 qas=false samples=4}' | filecheck %s --check-prefix=NOQAS
// After autodiff, @loss_grad differentiates the float classifier level 2 would replace (its
// gradients would name @fc_w and @fc_b, gone): a located error, not a module that lies.
// RUN: not adir-opt %s -p 'infer-shapes,autodiff,quantize-frozen-prefix{level=2 samples=4}' 2>&1 | filecheck %s --check-prefix=AFTER
// AFTER: level2.mlir:[[# @LINE + 11]]:1: error: quantize-frozen-prefix{level=2}: @loss_grad exists: level 2 runs before autodiff

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
// CHECK-NEXT:   adir.param @fc_w_q : tensor<3x8xi8> = dense<{{.*}}> : tensor<3x8xi8> {adir.step_scale = [139633.625 : f32, 139633.625 : f32, 139633.625 : f32]}
// CHECK-NEXT:   adir.param @fc_w_q_bias : tensor<3xi32> = dense<[-2657, 1726, -1864]> : tensor<3xi32> {adir.step_scale = [0x4E62153B : f32, 0x4E62153B : f32, 0x4E62153B : f32]}
// CHECK-NOT:    adir.param
// CHECK:        func.func @train_step(
// CHECK:          %h = adir.qfully_connected %flat, %[[W:[0-9]+]], %[[B:[0-9]+]] {{.*}} : tensor<1x8xi8>, tensor<3x8xi8>, tensor<3xi32> -> tensor<1x3xi8>
// CHECK:          adir.qrequantize_grad %h, %h_grad{{.*}} : tensor<1x3xi8>, tensor<1x3xf32> -> tensor<1x3xf32>
// CHECK:          adir.qsgd_update %[[W]], %fc_w_q_grad, %{{.*}} {step_scale = [139633.625 : f32, 139633.625 : f32, 139633.625 : f32]} : tensor<3x8xi8>, tensor<3x8xf32>, tensor<f32> -> tensor<3x8xi8>
// CHECK:          adir.qsgd_update %[[B]], %fc_w_q_bias_grad, %{{.*}} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>

// NOQAS:      adir.param @fc_w_q : tensor<3x8xi8> = {{.*}} {adir.step_scale = [1.000000e+00 : f32, 1.000000e+00 : f32, 1.000000e+00 : f32]}
// NOQAS-NEXT: adir.param @fc_w_q_bias : tensor<3xi32> = {{.*}} {adir.step_scale = [1.000000e+00 : f32, 1.000000e+00 : f32, 1.000000e+00 : f32]}
