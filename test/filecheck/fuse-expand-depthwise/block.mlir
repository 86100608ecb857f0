// fuse-expand-depthwise: a 1x1 expansion whose only reader is a depthwise conv of channel
// multiplier 1 becomes one adir.qexpand_depthwise, its properties those of the two convs (the
// expansion's output zero point is the fused op's expand_zero_point). The second expansion is
// read twice (by its depthwise conv and by the return), so it stays, and so does its depthwise.
// RUN: adir-opt %s -p 'fuse-expand-depthwise' | filecheck %s
// On buffers: select-kernels gives the fused reference kernel a 6 x 5 = 30-byte plane, and
// CMSIS-NN's refusal is recorded.
// RUN: adir-opt %s -p 'fuse-expand-depthwise,bufferize,select-kernels{kernels=cmsis-nn target=cortex-m4f}' | filecheck %s --check-prefix=KERNEL

// CHECK-LABEL: func.func @blocks
// CHECK-NEXT:    %d = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = 3 : i32, expand_zero_point = -128 : i32, output_zero_point = 5 : i32, expand_multiplier = array<i32: 1073741824>, expand_shift = array<i32: -3>, expand_act_max = -20 : i32, multiplier = array<i32: 1073741824, 1200000000, 1500000000, 2000000000>, shift = array<i32: -4, -4, -5, -5>, stride = array<i64: 2, 2>, padding = array<i64: 0, 1, 0, 1>} : tensor<1x6x5x2xi8>, tensor<4x1x1x2xi8>, tensor<4xi32>, tensor<1x3x3x4xi8>, tensor<4xi32> -> tensor<1x3x2x4xi8>
// CHECK-NEXT:    %e2 = adir.qconv2d %x, %we, %be
// CHECK-NEXT:    %d2 = adir.qconv2d %e2, %wd, %bd
// CHECK-NEXT:    func.return %d, %e2, %d2
// KERNEL:        adir_kernel.qexpand_depthwise ins(%x, %we, %be, %wd, %bd : {{.*}}) outs(%{{.*}}, %{{.*}} : memref<1x3x2x4xi8>, memref<30xi8>) {{.*}}adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "no fused 1x1 expansion + depthwise kernel in CMSIS-NN: reference kernel"}, adir.kernel_scratch = 30 : i64
func.func @blocks(%x: tensor<1x6x5x2xi8>, %we: tensor<4x1x1x2xi8>, %be: tensor<4xi32>, %wd: tensor<1x3x3x4xi8>, %bd: tensor<4xi32>) -> (tensor<1x3x2x4xi8>, tensor<1x6x5x4xi8>, tensor<1x6x5x4xi8>) {
  %e = adir.qconv2d %x, %we, %be {input_zero_point = 3 : i32, output_zero_point = -128 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -3>, act_min = -128 : i32, act_max = -20 : i32} : tensor<1x6x5x2xi8>, tensor<4x1x1x2xi8>, tensor<4xi32> -> tensor<1x6x5x4xi8>
  %d = adir.qconv2d %e, %wd, %bd {input_zero_point = -128 : i32, output_zero_point = 5 : i32, multiplier = array<i32: 1073741824, 1200000000, 1500000000, 2000000000>, shift = array<i32: -4, -4, -5, -5>, stride = array<i64: 2, 2>, padding = array<i64: 0, 1, 0, 1>, groups = 4 : i64} : tensor<1x6x5x4xi8>, tensor<1x3x3x4xi8>, tensor<4xi32> -> tensor<1x3x2x4xi8>
  %e2 = adir.qconv2d %x, %we, %be {input_zero_point = 3 : i32, output_zero_point = -128 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -3>} : tensor<1x6x5x2xi8>, tensor<4x1x1x2xi8>, tensor<4xi32> -> tensor<1x6x5x4xi8>
  %d2 = adir.qconv2d %e2, %wd, %bd {input_zero_point = -128 : i32, output_zero_point = 5 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<1x6x5x4xi8>, tensor<1x3x3x4xi8>, tensor<4xi32> -> tensor<1x6x5x4xi8>
  func.return %d, %e2, %d2 : tensor<1x3x2x4xi8>, tensor<1x6x5x4xi8>, tensor<1x6x5x4xi8>
}
