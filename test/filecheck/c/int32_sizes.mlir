// Every size a C kernel receives must fit its int32_t: a log_softmax over 2^31 rows used to
// print `ADIR_LOG_SOFTMAX(x, y, 2147483648, 3, 1)`, which C turns into -2^31 and compiles clean
// with -Wall -Werror. Now it is an error at the op, exit code 1, and no C: plan-memory refuses
// its 24 GiB arena first; with that limit lifted the C backend refuses the int32_t count.
// RUN: not adir-opt --plan-memory -t c %s 2>&1 | filecheck %s --check-prefix=ARENA
// RUN: not adir-opt --bufferize -p 'plan-memory{max_bytes=99999999999}' -t c %s 2>&1 | filecheck %s
// A product of dims counts too (65536 x 65536 rows of 3: each dim fits, the outer count not).
// RUN: sed 's/2147483648x3/65536x65536x3/g' %s | not adir-opt --bufferize -p 'plan-memory{max_bytes=99999999999}' -t c 2>&1 | filecheck %s --check-prefix=PRODUCT
// An argument only returned (no arena) is still a buffer the C copies.
// RUN: sed -e 's/%y = adir.log_softmax %x .*$//' -e 's/return %y/return %x/' %s | not adir-opt --plan-memory -t c 2>&1 | filecheck %s --check-prefix=ARG
// One element less than 2^31 is still C.
// RUN: sed -e 's/%y = adir.log_softmax %x .*$//' -e 's/return %y/return %x/' -e 's/2147483648x3/2147483647x1/g' %s | adir-opt --plan-memory -t c | filecheck %s --check-prefix=FITS

func.func @f(%x: tensor<2147483648x3xf32>) -> tensor<2147483648x3xf32> {
  %y = adir.log_softmax %x : tensor<2147483648x3xf32>
  func.return %y : tensor<2147483648x3xf32>
}
// ARENA: int32_sizes.mlir:15:3: error: plan-memory: the arena of @f needs 25769803776 bytes (24.0 GiB), more than max_bytes=2147483647
// CHECK: int32_sizes.mlir:15:3: error: C backend: the buffer (memref<2147483648x3xf32>) has 6442450944 elements; the C kernels take sizes as int32_t, at most 2147483647
// CHECK-NOT: ADIR_LOG_SOFTMAX
// PRODUCT: stdin:15:3: error: C backend: the buffer (memref<65536x65536x3xf32>) has 12884901888 elements
// ARG: stdin:16:3: error: C backend: operand 0 of func.return (memref<2147483648x3xf32>) has 6442450944 elements
// FITS: memcpy(out, x, 8589934588u);
