// adir.qsoftmax in C: the reference kernel takes the rows (the product of the leading dims),
// the row size (the last dim) and the softmax's integers; with select-kernels{kernels=cmsis-nn}, a row of at
// most 511 entries becomes arm_softmax_s8 with the same arguments in CMSIS-NN's order (it
// returns void: no ADIR_CMSIS_NN_CHECK), a longer one stays on the reference kernel.
// RUN: adir-opt %s -p 'bufferize,plan-memory' -t c | filecheck %s
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-nn},plan-memory' -t c | filecheck %s --check-prefix=CMSIS

func.func @f(%x: tensor<2x3x10xi8>, %y: tensor<1x600xi8>) -> (tensor<2x3x10xi8>, tensor<1x600xi8>) {
  %s = adir.qsoftmax %x {multiplier = 1132176768 : i32, shift = 20 : i32, diff_min = -1984 : i32} : tensor<2x3x10xi8>
  %l = adir.qsoftmax %y {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<1x600xi8>
  func.return %s, %l : tensor<2x3x10xi8>, tensor<1x600xi8>
}

// CHECK-LABEL: void f(const int8_t *x, const int8_t *y, int8_t *out0, int8_t *out1)
// CHECK:       ADIR_QSOFTMAX(x, s, 6, 10, 1132176768, 20, -1984);  /* adir_kernel.qsoftmax at qsoftmax.mlir:9 */
// CHECK:       ADIR_QSOFTMAX(y, l, 1, 600, 1073741824, 23, -248);  /* adir_kernel.qsoftmax at qsoftmax.mlir:10 */

// CMSIS-LABEL: void f(const int8_t *x, const int8_t *y, int8_t *out0, int8_t *out1)
// CMSIS:       arm_softmax_s8(x, 6, 10, 1132176768, 20, -1984, s);  /* adir_kernel.qsoftmax at qsoftmax.mlir:9 */
// CMSIS:       ADIR_QSOFTMAX(y, l, 1, 600, 1073741824, 23, -248);  /* adir_kernel.qsoftmax (cmsis-nn refused: rows of 600 entries, over the 511 arm_softmax_s8 takes) at qsoftmax.mlir:10 */
