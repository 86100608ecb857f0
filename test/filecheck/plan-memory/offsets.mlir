// plan-memory: offsets and the arena size as attributes; buffers whose lifetimes do not meet
// share bytes. %a (64 B) and %b (64 B) are live together; %c reuses %a's bytes after %a died.
// RUN: adir-opt %s -p 'plan-memory' | filecheck %s
// RUN: adir-opt %s -p 'plan-memory{algo=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: adir-opt %s -p 'plan-memory,verify-memory-plan' | filecheck %s --check-prefix=VERIFIED

func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  adir_kernel.exp ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  adir_kernel.neg ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  %c = memref.alloc() : memref<16xf32>
  adir_kernel.exp ins(%b : memref<16xf32>) outs(%c : memref<16xf32>)
  func.return %c : memref<16xf32>
}

// CHECK: builtin.module attributes {adir.arena_size = 128 : i64, adir.persistent_size = 0 : i64}
// CHECK: func.func @f(%x: memref<16xf32>) -> memref<16xf32> attributes {adir.arena_size = 128 : i64, adir.arena_lower_bound = 128 : i64, adir.naive_arena_size = 192 : i64}
// CHECK-NEXT: %a = memref.alloc() {adir.offset = [[A:[0-9]+]] : i64} : memref<16xf32>
// CHECK:      %b = memref.alloc() {adir.offset = [[B:[0-9]+]] : i64} : memref<16xf32>
// CHECK:      %c = memref.alloc() {adir.offset = [[A]] : i64} : memref<16xf32>

// NAIVE: %a = memref.alloc() {adir.offset = 0 : i64}
// NAIVE: %b = memref.alloc() {adir.offset = 64 : i64}
// NAIVE: %c = memref.alloc() {adir.offset = 128 : i64}

// VERIFIED: adir.arena_size = 128
