// A conv1d takes the tuned conv2d tiles at height 1 where they apply (stride 1, no padding, no
// dilation), and says why not where they do not; the C calls ADIR_TUNED_CONV1D or ADIR_CONV1D.
// RUN: adir-opt %s -p 'bufferize,select-kernels' | filecheck %s
// RUN: adir-opt %s -p 'bufferize,select-kernels,plan-memory' -t c | filecheck %s --check-prefix=C

func.func @f(%x: tensor<2x4x10xf32>, %w: tensor<6x2x3xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x10xf32>, tensor<2x6x4xf32>) {
  // CHECK: adir_kernel.conv1d {{.*}} {adir.kernel = "tuned", groups = 2 : i64}
  // C:     ADIR_TUNED_CONV1D(x, w, NULL, valid, 2, 4, 10, 6, 8, 3, 1, 0, 1, 2);
  %valid = adir.conv1d %x, %w {groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x8xf32>
  // CHECK: adir_kernel.conv1d {{.*}} {adir.kernel = "reference", adir.kernel_refused = {tuned = "padding [1, 1]: the tiles take none"}, padding = array<i64: 1, 1>, groups = 2 : i64}
  // C:     ADIR_CONV1D(x, w, NULL, same, 2, 4, 10, 6, 10, 3, 1, 1, 1, 2);
  %same = adir.conv1d %x, %w {padding = array<i64: 1, 1>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x10xf32>
  // CHECK: adir_kernel.conv1d {{.*}} {adir.kernel = "reference", adir.kernel_refused = {tuned = "stride [2]: the tiles take stride 1"}, stride = array<i64: 2>, groups = 2 : i64}
  // C:     ADIR_CONV1D(x, w, NULL, strided, 2, 4, 10, 6, 4, 3, 2, 0, 1, 2);
  %strided = adir.conv1d %x, %w {stride = array<i64: 2>, groups = 2 : i64} : tensor<2x4x10xf32>, tensor<6x2x3xf32> -> tensor<2x6x4xf32>
  func.return %valid, %same, %strided : tensor<2x6x8xf32>, tensor<2x6x10xf32>, tensor<2x6x4xf32>
}
