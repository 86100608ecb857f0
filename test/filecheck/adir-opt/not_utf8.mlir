// Input that is not UTF-8 is a located error.
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'func.func @f() {\n  func.return \xff\n}\n')" > %t.mlir
// RUN: not adir-opt %t.mlir 2>&1 | filecheck %s
// CHECK: not_utf8.mlir.tmp.mlir:2:15: error: the input is not valid UTF-8 (byte 0xff)
