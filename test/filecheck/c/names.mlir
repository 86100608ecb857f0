// C names (adir/backends/c/names.py): a symbol's C name is the prefix and the symbol with `_`
// for what a C identifier cannot hold, and macros upper-case it; two symbols that would share a
// name or a macro are an error at the second that names both (here `@w1` and `@W1` both give
// PARAM_W1, and `@"a b"` and `@a_b` both give `net_a_b`).
// RUN: not adir-opt --plan-memory -t c %s 2>&1 | filecheck %s --check-prefix=CASE
// RUN: sed -e 's/@W1/@w2/g' %s | not adir-opt --plan-memory -t 'c{prefix="net_"}' 2>&1 | filecheck %s --check-prefix=SPACE
// RUN: sed -e 's/@W1/@w2/g' -e 's/@a_b/@"a b c"/g' %s | adir-opt --plan-memory -t 'c{prefix="net_" file="header"}' | filecheck %s --check-prefix=HEADER

// CASE:  names.mlir:15:1: error: C backend: the index macro of @W1 and the index macro of @w1 (line 14) would both be `PARAM_W1`; rename one
// SPACE: stdin:17:1: error: C backend: the C array of parameter @a_b and the C array of parameter @"a b" (line 16) would both be `net_a_b`; rename one
// HEADER: #define NET_PARAM_A_B 2
// HEADER: #define NET_PARAM_A_B_C 3

adir.param @w1 : tensor<2xf32> = #adir.zeros
adir.param @W1 : tensor<2xf32> = #adir.zeros
adir.param @"a b" : tensor<2xf32> = #adir.zeros
adir.param @a_b : tensor<2xf32> = #adir.zeros

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w1 = adir.load @w1 : tensor<2xf32>
  %W1 = adir.load @W1 : tensor<2xf32>
  %ab = adir.load @"a b" : tensor<2xf32>
  %a_b = adir.load @a_b : tensor<2xf32>
  %0 = adir.mul %x, %w1 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = adir.mul %0, %W1 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %2 = adir.add %1, %ab : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %3 = adir.add %2, %a_b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %3 : tensor<2xf32>
}
