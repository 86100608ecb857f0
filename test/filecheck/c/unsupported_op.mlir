// An op of the planned IR that C cannot express is a located diagnostic.
// RUN: not adir-opt -t c %s 2>&1 | filecheck %s
// CHECK: unsupported_op.mlir:9:3: error: C backend: memref.dealloc has no C form
// CHECK-NEXT: memref.dealloc %b : memref<2xf32>

builtin.module attributes {adir.kernel_target = "host", adir.arena_size = 16 : i64} {
func.func @f(%x: memref<2xf32>) {
  %b = memref.alloc() {adir.offset = 0 : i64} : memref<2xf32>
  memref.dealloc %b : memref<2xf32>
  func.return
}
}
