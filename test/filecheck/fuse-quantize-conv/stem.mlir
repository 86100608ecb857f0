// fuse-quantize-conv: the image's quantize, its transpose to NHWC and the stem conv become one
// adir.quantize_qconv2d (the quantize's scale its input_scale) where they hold the most arena
// bytes: @stem's conv holds the 3x8x8 int8 image and its 8x8x8 output (192 + 512).
// In @peak_elsewhere a 1x1 conv to 32 channels after the stem (256 + 2,048) is the peak, and
// the chain stays.
// RUN: adir-opt %s -p 'fuse-quantize-conv' | filecheck %s
// On buffers: the reference kernel gets a 3 x 3 x 3 = 27-byte window, CMSIS-NN's refusal is
// recorded.
// RUN: adir-opt %s -p 'fuse-quantize-conv,bufferize,select-kernels{kernels=cmsis-nn target=cortex-m4f}' | filecheck %s --check-prefix=KERNEL

// CHECK-LABEL: func.func @stem
// CHECK-NEXT:    %y = adir.quantize_qconv2d %x, %w, %b {input_scale = 5.000000e-02 : f32, input_zero_point = -3 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xi8>, tensor<8xi32> -> tensor<1x8x8x8xi8>
// CHECK-NEXT:    func.return %y
// CHECK-LABEL: func.func @peak_elsewhere
// CHECK-NEXT:    adir.quantize
// CHECK-NEXT:    adir.qtranspose
// CHECK-NEXT:    adir.qconv2d
// KERNEL:        adir_kernel.quantize_qconv2d ins(%x, %w, %b : {{.*}}) outs(%{{.*}}, %{{.*}} : memref<1x8x8x8xi8>, memref<27xi8>) {{.*}}adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "CMSIS-NN's convolutions read an int8 input, none quantizes a float one"}, adir.kernel_scratch = 27 : i64
func.func @stem(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xi8>, %b: tensor<8xi32>) -> tensor<1x8x8x8xi8> {
  %q = adir.quantize %x {scale = 0.05 : f32, zero_point = -3 : i32} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xi8>
  %t = adir.qtranspose %q {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x8xi8> -> tensor<1x8x8x3xi8>
  %y = adir.qconv2d %t, %w, %b {input_zero_point = -3 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x3xi8>, tensor<8x3x3x3xi8>, tensor<8xi32> -> tensor<1x8x8x8xi8>
  func.return %y : tensor<1x8x8x8xi8>
}

func.func @peak_elsewhere(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xi8>, %b: tensor<8xi32>, %w2: tensor<32x1x1x8xi8>, %b2: tensor<32xi32>) -> tensor<1x8x8x32xi8> {
  %q = adir.quantize %x {scale = 0.05 : f32, zero_point = -3 : i32} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xi8>
  %t = adir.qtranspose %q {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x8xi8> -> tensor<1x8x8x3xi8>
  %y = adir.qconv2d %t, %w, %b {input_zero_point = -3 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x3xi8>, tensor<8x3x3x3xi8>, tensor<8xi32> -> tensor<1x8x8x8xi8>
  %e = adir.qconv2d %y, %w2, %b2 {input_zero_point = 1 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>} : tensor<1x8x8x8xi8>, tensor<32x1x1x8xi8>, tensor<32xi32> -> tensor<1x8x8x32xi8>
  func.return %e : tensor<1x8x8x32xi8>
}
