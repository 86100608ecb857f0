// A dense literal whose value does not fit its element type is a parse error at the literal,
// exit code 1 (xDSL's ValueError from packing the bytes was an internal error, exit code 2).
// RUN: not adir-opt %s 2>&1 | filecheck %s
// RUN: sed 's/dense<300>/dense<[1, 300]>/' %s | not adir-opt 2>&1 | filecheck %s --check-prefix=LIST

func.func @f() -> tensor<2xi8> {
  %c = adir.constant dense<300> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}
// CHECK: dense_literal_out_of_range.mlir:7:27: error: dense literal: Integer value 300 is out of range for type i8 which supports values in the range [-128, 256)
// CHECK-NOT: internal error
// LIST: stdin:7:27: error: dense literal: Integer value 300 is out of range for type i8
