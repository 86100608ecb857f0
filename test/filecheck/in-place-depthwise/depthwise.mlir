// in-place-depthwise: the stride-1 depthwise conv with its input's shape is marked in_place;
// the stride-2 one and the 1x1 conv are not.
// RUN: adir-opt %s -p 'in-place-depthwise' | filecheck %s
// On buffers: the marked conv writes over %x's buffer (it dies there) with a 7 x 5 = 35-byte
// plane, its CMSIS-NN refusal recorded; the stride-2 conv keeps CMSIS-NN.
// RUN: adir-opt %s -p 'in-place-depthwise,bufferize,select-kernels{kernels=cmsis-nn target=cortex-m4f}' | filecheck %s --check-prefix=KERNEL

// CHECK-LABEL: func.func @convs
// CHECK-NEXT:    %q = adir.quantize
// CHECK-NEXT:    %d = adir.qconv2d {{.*}}groups = 3 : i64, in_place}
// CHECK-NEXT:    %s = adir.qconv2d
// CHECK-NOT:     in_place
// CHECK:         func.return
// KERNEL:        adir_kernel.qconv2d ins(%q, %{{.*}}, %{{.*}} : {{.*}}) outs(%q, %{{.*}} : memref<1x7x5x3xi8>, memref<35xi8>) {{.*}}adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "written over its input (in_place): CMSIS-NN writes a separate output"}, adir.kernel_scratch = 35 : i64
// KERNEL:        adir_kernel.qconv2d {{.*}}adir.kernel = "cmsis-nn", adir.kernel_call = "arm_depthwise_conv_wrapper_s8"
func.func @convs(%x: tensor<1x7x5x3xf32>, %w: tensor<1x3x3x3xi8>, %b: tensor<3xi32>) -> (tensor<1x7x5x3xi8>, tensor<1x3x2x3xi8>) {
  %q = adir.quantize %x {scale = 0.5 : f32, zero_point = 0 : i32} : tensor<1x7x5x3xf32> -> tensor<1x7x5x3xi8>
  %d = adir.qconv2d %q, %w, %b {input_zero_point = 0 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, padding = array<i64: 1, 1, 1, 1>, groups = 3 : i64} : tensor<1x7x5x3xi8>, tensor<1x3x3x3xi8>, tensor<3xi32> -> tensor<1x7x5x3xi8>
  %s = adir.qconv2d %d, %w, %b {input_zero_point = 1 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, stride = array<i64: 2, 2>, groups = 3 : i64} : tensor<1x7x5x3xi8>, tensor<1x3x3x3xi8>, tensor<3xi32> -> tensor<1x3x2x3xi8>
  func.return %d, %s : tensor<1x7x5x3xi8>, tensor<1x3x2x3xi8>
}
