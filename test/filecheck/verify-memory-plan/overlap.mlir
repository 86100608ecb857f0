// The plan verifier rejects two live buffers sharing bytes, located at the second one.
// RUN: not adir-opt %s -p verify-memory-plan 2>&1 | filecheck %s

func.func @f(%x: memref<4xf32>) -> memref<4xf32> attributes {adir.arena_size = 32 : i64} {
  %a = memref.alloc() {adir.offset = 0 : i64} : memref<4xf32>
  adir_kernel.exp ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  %b = memref.alloc() {adir.offset = 0 : i64} : memref<4xf32>
  adir_kernel.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  func.return %b : memref<4xf32>
}
// CHECK: overlap.mlir:7:3: error: verify-memory-plan: bytes [0, 16) overlap [0, 16) of a buffer live at the same time (ops 3-3)
