// A symbol defined twice is an error at its second definition, with a note at the first (xDSL
// reports it at the module, with no line: "builtin.module: Redefinition of symbol").
// RUN: not adir-opt %s 2>&1 | filecheck %s

adir.param @w : tensor<3xf32> = #adir.zeros
func.func @f() {
  func.return
}
func.func @w() {
  func.return
}
// CHECK: duplicate_symbol.mlir:9:1: error: redefinition of symbol @w
// CHECK-NEXT: {{^}}func.func @w() {
// CHECK-NEXT: {{^\^$}}
// CHECK-NEXT: duplicate_symbol.mlir:5:1: note: @w is first defined here
