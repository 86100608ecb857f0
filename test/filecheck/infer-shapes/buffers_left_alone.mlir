// infer-shapes on IR that is already bufferized (memref results, calls returning memrefs)
// leaves it as it is; it used to crash on a function returning a memref.
// RUN: adir-opt %s -p infer-shapes | filecheck %s

func.func @g(%x: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  adir_kernel.exp ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  func.return %a : memref<16xf32>
}

func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
  %r = func.call @g(%x) : (memref<16xf32>) -> memref<16xf32>
  func.return %r : memref<16xf32>
}

// CHECK:      func.func @g(%x: memref<16xf32>) -> memref<16xf32> {
// CHECK:        func.return %a : memref<16xf32>
// CHECK:      func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
// CHECK-NEXT:   %r = func.call @g(%x) : (memref<16xf32>) -> memref<16xf32>
// CHECK-NEXT:   func.return %r : memref<16xf32>
