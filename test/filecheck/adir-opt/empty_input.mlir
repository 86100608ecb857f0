// An input of nothing, or of blanks and comments only, is an empty module, as mlir-opt reads
// it (was "Could not parse entire input!"); so is an empty chunk of a split input.
// RUN: printf '' > %t.mlir
// RUN: adir-opt %t.mlir | filecheck %s
// RUN: adir-opt %s | filecheck %s
// RUN: printf '// -----\nfunc.func @f() {\n  func.return\n}\n' | adir-opt --split-input-file | filecheck %s --check-prefix=SPLIT

// CHECK: builtin.module {
// CHECK-NEXT: }
// SPLIT: builtin.module {
// SPLIT-NEXT: }
// SPLIT: // -----
// SPLIT: func.func @f()
