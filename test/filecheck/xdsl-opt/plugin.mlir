// adir is an xDSL plugin (the `xdsl.universe` entry point, adir/universe.py): xDSL's own
// `xdsl-opt` parses adir's dialects and runs adir's passes beside xDSL's, and prints the C.
// RUN: xdsl-opt %s -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1},canonicalize,cse,bufferize,plan-memory' | filecheck %s --check-prefix=PLANNED
// RUN: xdsl-opt %s -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1},bufferize,select-kernels,plan-memory' -t 'c{prefix="tiny_"}' | filecheck %s --check-prefix=C
// xdsl-opt lists adir's passes and target among its own.
// RUN: env COLUMNS=100000 xdsl-opt --help | filecheck %s --check-prefix=HELP
// And adir-opt composes any of xDSL's passes with adir's (licm: xDSL's loop-invariant code
// motion; here it finds no loop and changes nothing).
// RUN: adir-opt %s -p 'infer-shapes,autodiff,licm,dce' | filecheck %s --check-prefix=MIXED

adir.param @w : tensor<4xf32> = #adir.normal<seed = 3>

func.func @loss(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y = adir.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<*xf32>
  %l = adir.sum %y : tensor<*xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// The four floats of @w are the persistent memory; the arena holds @train_step's buffers.
// PLANNED: builtin.module attributes {adir.arena_size = {{[0-9]+}} : i64, adir.persistent_size = 16 : i64}
// PLANNED: func.func @train_step(%x: memref<4xf32>) -> memref<f32> attributes {adir.optimizer = "sgd", adir.arena_size
// PLANNED: adir_kernel.sgd_update

// C: float tiny_train_step(const float *x)

// HELP: Available targets are: {{(.*,)?}}c,
// HELP: Available passes are: {{.*}}autodiff,{{.*}}plan-memory,{{.*}}canonicalize,

// MIXED: func.func @loss_grad(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
