// -o writes only on success: a failed run leaves the previous output as it was, and no
// temporary file behind.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: adir-opt %s -o %t.dir/out.mlir
// RUN: filecheck %s --input-file=%t.dir/out.mlir --check-prefix=FIRST
// RUN: not adir-opt %s -p 'infer-shapes{bogus=1}' -o %t.dir/out.mlir
// RUN: not adir-opt %S/shape_mismatch.mlir -o %t.dir/out.mlir
// RUN: filecheck %s --input-file=%t.dir/out.mlir --check-prefix=FIRST
// RUN: ls -a %t.dir | filecheck %s --check-prefix=FILES

func.func @kept() {
  func.return
}
// FIRST: func.func @kept()
// FILES-NOT: .tmp
