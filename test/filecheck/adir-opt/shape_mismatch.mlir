// A verifier error outside --verify-diagnostics: one located line on stderr, exit code 1,
// nothing on stdout.
// RUN: not adir-opt %s 2>&1 | filecheck %s
// RUN: not adir-opt %s 2>/dev/null | filecheck %s --check-prefix=STDOUT --allow-empty

func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<2xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: shape_mismatch.mlir:7:3: error: adir.add: operands lhs (2x3) and rhs (2) do not broadcast: dimensions 3 and 2 differ
// CHECK-NEXT: {{^}}  %0 = adir.add
// CHECK-NEXT: {{^}}  ^
// STDOUT-NOT: {{.}}
