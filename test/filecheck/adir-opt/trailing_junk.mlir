// Junk after a param is an error at the junk: xDSL reads it as an op name and reported the
// line after it (the next op's line, or an empty line at the end of the file).
// RUN: not adir-opt %s 2>&1 | filecheck %s
// RUN: head -c -1 %s | grep -v RUN | sed -n '/^adir.param/p' > %t.mlir
// RUN: not adir-opt %t.mlir 2>&1 | filecheck %s --check-prefix=LAST

adir.param @w : tensor<3xf32> = #adir.zeros junk

func.func @f() {
  func.return
}
// CHECK: trailing_junk.mlir:7:45: error: unknown op 'junk' (no registered dialect defines it)
// CHECK-NEXT: {{^}}adir.param @w : tensor<3xf32> = #adir.zeros junk
// CHECK-NEXT: {{^                                            \^~~~$}}
// LAST: .mlir:1:45: error: unknown op 'junk' (no registered dialect defines it)
// LAST-NEXT: {{^}}adir.param @w : tensor<3xf32> = #adir.zeros junk
