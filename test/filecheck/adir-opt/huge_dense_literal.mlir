// A dense literal is checked at its type before any data is built: a splat over 2 x 10^11
// elements used to be expanded by xDSL into a Python list first (MemoryError, exit code 2).
// The limit is MAX_DENSE_BYTES = 2^31 - 1 bytes (adir/limits.py), the most C can hold.
// RUN: not adir-opt %s 2>&1 | filecheck %s
// The same in hex (xDSL repeated the bytes), and as a constant in the generic form.
// RUN: sed 's/dense<1.0>/dense<"0x0000803F">/' %s | not adir-opt 2>&1 | filecheck %s --check-prefix=HEX
// RUN: not adir-opt %S/Inputs/huge_constant.mlir 2>&1 | filecheck %s --check-prefix=CONSTANT
// 2^31 - 1 bytes is the limit itself: 536870911 f32 elements are taken (and stay one element).
// RUN: sed 's/2x99999999999/536870911/g' %s | adir-opt | filecheck %s --check-prefix=LIMIT
// RUN: sed 's/2x99999999999/536870912/g' %s | not adir-opt 2>&1 | filecheck %s --check-prefix=PAST

adir.param @w : tensor<2x99999999999xf32> = dense<1.0> : tensor<2x99999999999xf32>
// CHECK: huge_dense_literal.mlir:12:58: error: dense literal of type tensor<2x99999999999xf32> is too large: 199999999998 elements of 4 bytes; adir takes at most 2147483647 bytes of dense data
// CHECK-NEXT: adir.param @w : tensor<2x99999999999xf32> = dense<1.0> : tensor<2x99999999999xf32>
// CHECK-NEXT: {{^ {57}\^~+$}}
// CHECK-NOT: internal error
// HEX: stdin:12:67: error: dense literal of type tensor<2x99999999999xf32> is too large
// CONSTANT: huge_constant.mlir:3:{{[0-9]+}}: error: dense literal of type tensor<99999999999xi32> is too large: 99999999999 elements of 4 bytes
// LIMIT: adir.param @w : tensor<536870911xf32> = dense<1.000000e+00> : tensor<536870911xf32>
// PAST: stdin:12:54: error: dense literal of type tensor<536870912xf32> is too large: 536870912 elements of 4 bytes
