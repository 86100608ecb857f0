// select-kernels{kernels=cmsis-nn}: a qsoftmax whose rows (its last dim) have 1 to 511 entries becomes
// arm_softmax_s8, which needs no scratch buffer on any target; 512 entries tied at the maximum
// would make arm_softmax_s8 shift an int32 by 32 bits, so longer rows stay on the reference
// kernel and say why.
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn}' | filecheck %s
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn target=cortex-m55}' | filecheck %s

func.func @f(%x: tensor<4x511xi8>, %y: tensor<2x512xi8>, %z: tensor<3x0xi8>)
    -> (tensor<4x511xi8>, tensor<2x512xi8>, tensor<3x0xi8>) {
  // CHECK:      adir_kernel.qsoftmax ins(%x : memref<4x511xi8>) outs(%s : memref<4x511xi8>) {adir.kernel = "cmsis-nn", adir.kernel_call = "arm_softmax_s8",
  %s = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<4x511xi8>
  // CHECK:      adir_kernel.qsoftmax ins(%y : memref<2x512xi8>) outs(%l : memref<2x512xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "rows of 512 entries, over the 511 arm_softmax_s8 takes"},
  %l = adir.qsoftmax %y {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<2x512xi8>
  // CHECK:      adir_kernel.qsoftmax ins(%z : memref<3x0xi8>) outs(%e : memref<3x0xi8>) {adir.kernel = "reference", adir.kernel_refused = {"cmsis-nn" = "empty rows"},
  %e = adir.qsoftmax %z {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<3x0xi8>
  func.return %s, %l, %e : tensor<4x511xi8>, tensor<2x512xi8>, tensor<3x0xi8>
}
