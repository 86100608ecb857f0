// adir.qsoftmax in C: the reference kernel takes the rows (the product of the leading dims),
// the row size (the last dim) and the softmax's integers.
// RUN: adir-opt %s -p 'bufferize,plan-memory' -t c | filecheck %s

func.func @f(%x: tensor<2x3x10xi8>, %y: tensor<1x600xi8>) -> (tensor<2x3x10xi8>, tensor<1x600xi8>) {
  %s = adir.qsoftmax %x {multiplier = 1132176768 : i32, shift = 20 : i32, diff_min = -1984 : i32} : tensor<2x3x10xi8>
  %l = adir.qsoftmax %y {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<1x600xi8>
  func.return %s, %l : tensor<2x3x10xi8>, tensor<1x600xi8>
}

// CHECK-LABEL: void f(const int8_t *x, const int8_t *y, int8_t *out0, int8_t *out1)
// CHECK:       ADIR_QSOFTMAX(x, s, 6, 10, 1132176768, 20, -1984);  /* adir_kernel.qsoftmax at qsoftmax.mlir:6 */
// CHECK:       ADIR_QSOFTMAX(y, l, 1, 600, 1073741824, 23, -248);  /* adir_kernel.qsoftmax at qsoftmax.mlir:7 */

