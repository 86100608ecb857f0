// --memory-report prints the plan of each function to stderr: buffers, intervals, offsets,
// the arena beside its lower bound, the naive size and the persistent bytes.
// RUN: adir-opt --plan-memory --memory-report %s 2>&1 >/dev/null | filecheck %s
// RUN: not adir-opt --memory-report %s 2>&1 | filecheck %s --check-prefix=ALONE

adir.param @w : tensor<8xf32> = #adir.zeros

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = adir.load @w : tensor<8xf32>
  %a = adir.exp %x : tensor<8xf32>
  %b = adir.mul %a, %w : tensor<8xf32>
  func.return %b : tensor<8xf32>
}

// CHECK:      memory plan of @f
// CHECK:      buffer                       bytes  first   last    offset
// CHECK-NEXT: %a                              32      2      5         0
// CHECK:      arena                    32 bytes (8 floats)
// CHECK-NEXT: lower bound              32 bytes (arena / bound = 1.0000)
// CHECK-NEXT: naive (no reuse)         32 bytes
// CHECK-NEXT: persistent               32 bytes (parameters and optimizer state)
// ALONE: adir-opt: error: --memory-report needs --plan-memory
