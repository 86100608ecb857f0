// select-kernels{kernels=cmsis-nn} gives CMSIS-NN the kernels it computes and each its scratch
// buffer, sized by CMSIS-NN's *_get_buffer_size for the target's build (host: scalar,
// cortex-m4f: dsp, cortex-m55: mve), as an extra `outs` (plan-memory places it later); the
// others keep their reference kernel and say why.
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn}' | filecheck %s --check-prefixes=CHECK,SCALAR
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn target=cortex-m4f}' | filecheck %s --check-prefixes=CHECK,DSP
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn target=cortex-m55}' | filecheck %s --check-prefixes=CHECK,MVE

// SCALAR-LABEL: builtin.module attributes {adir.kernel_target = "host", adir.cmsis_nn_build = "scalar"}
// DSP-LABEL:    builtin.module attributes {adir.kernel_target = "cortex-m4f", adir.cmsis_nn_build = "dsp"}
// MVE-LABEL:    builtin.module attributes {adir.kernel_target = "cortex-m55", adir.cmsis_nn_build = "mve"}
func.func @f(%x: tensor<1x10x10x8xi8>, %w: tensor<4x3x3x8xi8>, %b: tensor<4xi32>,
             %dw: tensor<1x3x3x8xi8>, %db: tensor<8xi32>, %v: tensor<1x32xi8>,
             %fw: tensor<3x32xi8>, %fb: tensor<3xi32>)
    -> (tensor<1x8x8x4xi8>, tensor<1x6x6x4xi8>, tensor<1x10x10x8xi8>, tensor<1x5x5x8xi8>,
        tensor<1x5x5x8xi8>, tensor<1x3xi8>, tensor<1x3xi8>) {
  // A 3x3 conv: im2col, two int16 columns of 3 * 3 * 8 = 72 entries (288 bytes), or on Helium
  // four int8 columns of 72 rounded up to 80 (320 bytes).
  // SCALAR:      %scratch = memref.alloc() : memref<288xi8>
  // DSP:         %scratch = memref.alloc() : memref<288xi8>
  // MVE:         %scratch = memref.alloc() : memref<320xi8>
  // CHECK-NEXT:  adir_kernel.qconv2d ins({{.*}}) outs(%c, %scratch : memref<1x8x8x4xi8>, memref<[[CONV:[0-9]+]]xi8>) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_convolve_wrapper_s8", adir.kernel_scratch = [[CONV]] : i64,
  %c = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x10x10x8xi8>, tensor<4x3x3x8xi8>, tensor<4xi32> -> tensor<1x8x8x4xi8>
  // CHECK:       adir_kernel.qconv2d ins({{.*}}) outs(%cd : memref<1x6x6x4xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "dilation"},
  %cd = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, dilation = array<i64: 2, 2>} : tensor<1x10x10x8xi8>, tensor<4x3x3x8xi8>, tensor<4xi32> -> tensor<1x6x6x4xi8>
  // A 3x3 depthwise conv with padding 1: CMSIS-NN's 3x3 kernel needs nothing, Helium's
  // 4 * 124 * 3 * 3 = 4464 bytes.
  // MVE:         %scratch_1 = memref.alloc() : memref<4464xi8>
  // SCALAR:      adir_kernel.qconv2d ins({{.*}}) outs(%d : memref<1x10x10x8xi8>) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_depthwise_conv_wrapper_s8",
  // DSP:         adir_kernel.qconv2d ins({{.*}}) outs(%d : memref<1x10x10x8xi8>) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_depthwise_conv_wrapper_s8",
  // MVE-NEXT:    adir_kernel.qconv2d ins({{.*}}) outs(%d, %scratch_1 : memref<1x10x10x8xi8>, memref<4464xi8>) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_depthwise_conv_wrapper_s8", adir.kernel_scratch = 4464 : i64,
  %d = adir.qconv2d %x, %dw, %db {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : tensor<1x10x10x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32> -> tensor<1x10x10x8xi8>
  // Padding at the top but none at the bottom: CMSIS-NN cannot express it.
  // CHECK:       adir_kernel.qmaxpool2d ins({{.*}}) outs(%m : memref<1x5x5x8xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "padding bottom/right not top/left or one more"},
  %m = adir.qmaxpool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : tensor<1x10x10x8xi8> -> tensor<1x5x5x8xi8>
  // The average pool's DSP code sums each of the 8 channels in an int32: 32 bytes.
  // DSP:         %scratch_1 = memref.alloc() : memref<32xi8>
  // CHECK:       adir_kernel.qavgpool2d ins({{.*}}) outs(%a{{.*}}) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_avgpool_s8"
  %a = adir.qavgpool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x10x10x8xi8> -> tensor<1x5x5x8xi8>
  // Helium's fully-connected kernel reads the 3 outputs' weight sums (int32) from scratch.
  // MVE:         %scratch_2 = memref.alloc() : memref<12xi8>
  // CHECK:       adir_kernel.qfully_connected ins({{.*}}) outs(%y{{.*}}) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_fully_connected_s8"
  %y = adir.qfully_connected %v, %fw, %fb {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x32xi8>, tensor<3x32xi8>, tensor<3xi32> -> tensor<1x3xi8>
  // CHECK:       adir_kernel.qfully_connected ins({{.*}}) outs(%z : memref<1x3xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "per-channel multipliers"},
  %z = adir.qfully_connected %v, %fw, %fb {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824, 1073741824, 1073741824>, shift = array<i32: -1, -1, -1>} : tensor<1x32xi8>, tensor<3x32xi8>, tensor<3xi32> -> tensor<1x3xi8>
  func.return %c, %cd, %d, %m, %a, %y, %z : tensor<1x8x8x4xi8>, tensor<1x6x6x4xi8>, tensor<1x10x10x8xi8>, tensor<1x5x5x8xi8>, tensor<1x5x5x8xi8>, tensor<1x3xi8>, tensor<1x3xi8>
}

// A 1x1 kernel with padding: CMSIS-NN's 1x1 path would assume none.
// CHECK-LABEL: func.func @padded_1x1
// CHECK:       adir_kernel.qconv2d ins({{.*}}) outs(%c : memref<1x5x5x2xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "1x1 kernel with padding"},
func.func @padded_1x1(%x: tensor<1x4x4x8xi8>, %w: tensor<2x1x1x8xi8>, %b: tensor<2xi32>) -> tensor<1x5x5x2xi8> {
  %c = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, padding = array<i64: 0, 1, 0, 1>} : tensor<1x4x4x8xi8>, tensor<2x1x1x8xi8>, tensor<2xi32> -> tensor<1x5x5x2xi8>
  func.return %c : tensor<1x5x5x2xi8>
}
