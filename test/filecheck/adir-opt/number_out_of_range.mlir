// A number its type cannot hold is a located parse error: xDSL's packing of 2^30 as f16 raised
// OverflowError (an internal error, exit code 2), found by the fuzz suite.
// RUN: not adir-opt %s 2>&1 | filecheck %s

func.func @f(%z: tensor<3x4xi8>) -> tensor<3x4xi8> {
  %e = adir.qsoftmax %z {multiplier = 1073741824 : f16, shift = 23 : i32, diff_min = -248 : i32} : tensor<3x4xi8>
  func.return %e : tensor<3x4xi8>
}
// CHECK: number_out_of_range.mlir:6:39: error: number out of range for its type: float too large to pack with e format
// CHECK-NEXT: %e = adir.qsoftmax
// CHECK-NEXT: {{^ {38}\^~+$}}
