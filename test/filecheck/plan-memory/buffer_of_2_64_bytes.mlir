// A buffer of 2^64 bytes is refused before placement, whose int64 arithmetic overflowed on it
// (OverflowError, an internal error, exit code 2; found by the fuzz census).
// RUN: not adir-opt %s --plan-memory 2>&1 | filecheck %s

func.func @f(%x: tensor<2147483648x4xf32>, %w: tensor<2147483648x4xf32>) -> tensor<2147483648x2147483648xf32> {
  %y = adir.matmul %x, %w {transpose_b} : tensor<2147483648x4xf32>, tensor<2147483648x4xf32> -> tensor<2147483648x2147483648xf32>
  func.return %y : tensor<2147483648x2147483648xf32>
}
// CHECK: buffer_of_2_64_bytes.mlir:6:3: error: plan-memory: the arena of @f needs 18446744073709551616 bytes (16777216.0 TiB), more than max_bytes=2147483647
