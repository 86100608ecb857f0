// quantize-int8 adds @predict_int8: the conv, its batchnorm and its relu become one NHWC
// qconv2d (the relu a clamp at the output's zero point, which calibration puts at -128 since a
// relu's output is >= 0); the image enters NHWC by a qreshape (one channel: the same bytes) and
// leaves it by a qtranspose before the NCHW-ordered reshape; the matmul and its bias add become
// a qfully_connected with one (per-tensor) multiplier; the sigmoid a table; the log_softmax
// stays f32 after a dequantize. Calibration: 4 standard-normal inputs, seed 0.
// RUN: adir-opt %s -p 'derive-predict,quantize-int8{samples=4}' | filecheck %s
// Deterministic: the same pipeline twice gives the same bytes.
// RUN: adir-opt %s -p 'derive-predict,quantize-int8{samples=4}' > %t.1
// RUN: adir-opt %s -p 'derive-predict,quantize-int8{samples=4}' > %t.2
// RUN: diff %t.1 %t.2

adir.param @conv_w : tensor<2x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @conv_b : tensor<2xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 2>
adir.param @bn_gamma : tensor<2xf32> = dense<[1.0, 0.5]> : tensor<2xf32>
adir.param @bn_beta : tensor<2xf32> = dense<[0.1, -0.1]> : tensor<2xf32>
adir.param @bn_mean : tensor<2xf32> = dense<[0.0, 0.2]> : tensor<2xf32>
adir.param @bn_var : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
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
  %s = adir.sigmoid %h : tensor<1x3xf32>
  %logp = adir.log_softmax %s : tensor<1x3xf32>
  %loss = adir.nll %logp, %label : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @predict_int8(%x: tensor<1x1x6x6xf32>) -> tensor<1x3xf32> attributes {adir.quantized = "int8"} {
// CHECK-NEXT:    %x_1 = adir.quantize %x {scale = {{.*}} : f32, zero_point = {{-?[0-9]+}} : i32} : tensor<1x1x6x6xf32> -> tensor<1x1x6x6xi8>
// CHECK-NEXT:    %0 = adir.qreshape %x_1 {shape = array<i64: 1, 6, 6, 1>} : tensor<1x1x6x6xi8> -> tensor<1x6x6x1xi8>
// CHECK-NEXT:    %1 = adir.constant dense<{{.*}}> : tensor<2x3x3x1xi8>
// CHECK-NEXT:    %2 = adir.constant dense<{{.*}}> : tensor<2xi32>
// CHECK-NEXT:    %a = adir.qconv2d %0, %1, %2 {input_zero_point = {{-?[0-9]+}} : i32, output_zero_point = -128 : i32, multiplier = array<i32: {{[0-9]+}}, {{[0-9]+}}>, shift = array<i32: {{-?[0-9]+}}, {{-?[0-9]+}}>} : tensor<1x6x6x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32> -> tensor<1x4x4x2xi8>
// CHECK-NEXT:    %p = adir.qmaxpool2d %a {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x4x4x2xi8> -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    %3 = adir.qtranspose %p {permutation = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x2xi8>
// CHECK-NEXT:    %flat = adir.qreshape %3 {shape = array<i64: 1, 8>} : tensor<1x2x2x2xi8> -> tensor<1x8xi8>
// CHECK-NEXT:    %4 = adir.constant dense<{{.*}}> : tensor<3x8xi8>
// CHECK-NEXT:    %5 = adir.constant dense<{{.*}}> : tensor<3xi32>
// CHECK-NEXT:    %h = adir.qfully_connected %flat, %4, %5 {input_zero_point = -128 : i32, output_zero_point = {{-?[0-9]+}} : i32, multiplier = array<i32: {{[0-9]+}}>, shift = array<i32: {{-?[0-9]+}}>} : tensor<1x8xi8>, tensor<3x8xi8>, tensor<3xi32> -> tensor<1x3xi8>
// CHECK-NEXT:    %6 = adir.constant dense<{{.*}}> : tensor<256xi8>
// CHECK-NEXT:    %s = adir.qlookup %h, %6 : tensor<1x3xi8>, tensor<256xi8> -> tensor<1x3xi8>
// CHECK-NEXT:    %s_1 = adir.dequantize %s {scale = 3.906250e-03 : f32, zero_point = -128 : i32} : tensor<1x3xi8> -> tensor<1x3xf32>
// CHECK-NEXT:    %logp = adir.log_softmax %s_1 : tensor<1x3xf32>
// CHECK-NEXT:    func.return %logp : tensor<1x3xf32>
// CHECK-NEXT:  }
