// An integer type wider than MLIR's limit (2^24 - 1 bits) is a located parse error: xDSL
// computed the range of i99999999999 as Python integers of that many bits (a MemoryError, exit
// code 2, found by the fuzz suite).
// RUN: not adir-opt %s 2>&1 | filecheck %s

builtin.module attributes {adir.arena_size = 16 : i99999999999} {
}
// CHECK: integer_type_too_wide.mlir:6:51: error: integer type i99999999999 is wider than 16777215 bits (MLIR's limit)
