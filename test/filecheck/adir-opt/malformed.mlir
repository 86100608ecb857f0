// A syntax error is one located line (then the source line and a caret), exit code 1.
// RUN: not adir-opt %s 2>&1 | filecheck %s

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = adir.add %a %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: malformed.mlir:5:20: error: {{.+}}
// CHECK-NEXT: {{^}}  %0 = adir.add %a %a : tensor<2xf32>
// CHECK-NEXT: {{^}}                   ^
// CHECK-NOT: Traceback
