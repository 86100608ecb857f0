// A string literal that is never closed fails at once, also as the file's first token: xDSL's
// pattern backtracked exponentially over the rest of the line (a hang, found by the fuzz suite).
// RUN: sed '1s|^//|"|' %s | not adir-opt 2>&1 | filecheck %s
// RUN: not adir-opt %S/Inputs/unclosed_symbol.mlir 2>&1 | filecheck %s --check-prefix=SYMBOL

// CHECK: stdin:1:1: error: End of file reached before closing string literal.
// SYMBOL: unclosed_symbol.mlir:1:13: error: End of file reached before closing string literal.
