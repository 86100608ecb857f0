// What autodiff refuses, each with a located error.
// RUN: not adir-opt %s -p autodiff 2>&1 | filecheck %s --check-prefix=UNMARKED
// RUN: not adir-opt %s -p 'autodiff{func=nope}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not adir-opt %s -p 'autodiff{func=vector}' 2>&1 | filecheck %s --check-prefix=VECTOR
// RUN: not adir-opt %s -p 'autodiff{func=unknown_shape}' 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not adir-opt %s -p 'autodiff{func=scalar wrt_args=3}' 2>&1 | filecheck %s --check-prefix=ARG

func.func @vector(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}

func.func @unknown_shape(%x: tensor<3xf32>) -> tensor<f32> {
  %e = adir.exp %x : tensor<3xf32> -> tensor<*xf32>
  %l = adir.sum %e : tensor<*xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  func.return %x : tensor<f32>
}

// UNMARKED: error: autodiff: no loss function; mark it `attributes {adir.loss}` or name it with autodiff{func=NAME}
// MISSING: error: autodiff: no function @nope (the module has: @vector, @unknown_shape, @scalar)
// VECTOR: bad_input.mlir:8:1: error: autodiff: @vector must return one tensor<f32> loss, not tensor<3xf32>
// SHAPE: bad_input.mlir:13:3: error: autodiff needs static shapes, adir.exp gives tensor<*xf32> (run infer-shapes first)
// ARG: bad_input.mlir:18:1: error: autodiff: @scalar has no argument #3
