// An arena over max_bytes (by default 2^31 - 1, the most static data a C build holds) is an
// error at the function's largest buffer, exit code 1, not a plan no C compiler links (it used
// to accept arenas up to 26 TB). max_bytes raises the limit for a study of the plan.
// RUN: not adir-opt --plan-memory %s 2>&1 | filecheck %s
// RUN: adir-opt --bufferize -p 'plan-memory{max_bytes=2400000000}' %s | filecheck %s --check-prefix=RAISED
// RUN: not adir-opt --bufferize -p 'plan-memory{max_bytes=-1}' %s 2>&1 | filecheck %s --check-prefix=OPTION

func.func @f(%x: tensor<600000000xf32>) -> tensor<600000000xf32> {
  %y = adir.exp %x : tensor<600000000xf32>
  %z = adir.exp %y : tensor<600000000xf32>
  func.return %z : tensor<600000000xf32>
}
// CHECK: arena_limit.mlir:9:3: error: plan-memory: the arena of @f needs 2400000000 bytes (2.2 GiB), more than max_bytes=2147483647 (2.0 GiB, the most static data a C build holds); this buffer takes 2400000000
// RAISED: adir.arena_size = 2400000000 : i64
// OPTION: error: plan-memory: max_bytes must be in [0, 2^63), got -1
