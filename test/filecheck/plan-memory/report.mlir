// --memory-report prints the plan of each function to stderr: buffers, intervals, offsets,
// the arena beside its lower bound and the naive size, then RAM and flash by what they hold.
// @w is written by no function, so it is a frozen parameter in flash (adir/param_storage.py);
// @v is the state @f writes, in RAM.
// RUN: adir-opt --plan-memory --memory-report %s 2>&1 >/dev/null | filecheck %s
// RUN: not adir-opt --memory-report %s 2>&1 | filecheck %s --check-prefix=ALONE

adir.param @w : tensor<8xf32> = #adir.zeros
adir.param @v : tensor<2xf32> = #adir.zeros {trainable = false}

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = adir.load @w : tensor<8xf32>
  %a = adir.exp %x : tensor<8xf32>
  %b = adir.mul %a, %w : tensor<8xf32>
  %c = adir.constant dense<[1.0, 2.0]> : tensor<2xf32>
  adir.store %c, @v : tensor<2xf32>
  func.return %b : tensor<8xf32>
}

// CHECK:      memory plan of @f
// CHECK:      buffer                       bytes  first   last    offset
// CHECK-NEXT: %a                              32      5      8         0
// CHECK:      arena                    32 bytes (8 floats)
// CHECK-NEXT: lower bound              32 bytes (arena / bound = 1.0000)
// CHECK-NEXT: naive (no reuse)         32 bytes
// CHECK-EMPTY:
// CHECK-NEXT: RAM                      40 bytes (arena and what the functions write)
// CHECK-NEXT:   arena                          32
// CHECK-NEXT:   trainable parameters            0
// CHECK-NEXT:   optimizer state                 0
// CHECK-NEXT:   other mutable state             8 (e.g. running statistics)
// CHECK-NEXT:   frozen, drawn at init           0 (a seeded initializer; dense data keeps them in flash)
// CHECK-NEXT: flash                    40 bytes (read only)
// CHECK-NEXT:   frozen parameters              32 (no function writes them)
// CHECK-NEXT:   initial values                  0 (dense data init copies to RAM)
// CHECK-NEXT:   constants                       8
// ALONE: adir-opt: error: --memory-report needs --plan-memory
