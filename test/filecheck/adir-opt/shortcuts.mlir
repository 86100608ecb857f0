// Shortcut flags expand to the canonical pipeline whatever their order:
// `adir-opt --autodiff --plan-memory` runs infer-shapes, autodiff, bufferize and plan-memory.
// RUN: adir-opt %s --infer-shapes | filecheck %s --check-prefix=SHAPES
// RUN: adir-opt --autodiff --plan-memory %s | filecheck %s --check-prefix=PLANNED
// RUN: adir-opt --plan-memory --autodiff %s | filecheck %s --check-prefix=PLANNED

adir.param @w : tensor<4xf32> = #adir.normal<seed = 3>

func.func @loss(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y = adir.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<*xf32>
  %e = adir.exp %y : tensor<*xf32>
  %l = adir.sum %e : tensor<*xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// SHAPES: func.func @loss(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss}
// SHAPES-NEXT: %w = adir.load @w : tensor<4xf32>
// SHAPES-NEXT: %y = adir.mul %x, %w : tensor<4xf32>

// PLANNED: builtin.module attributes {adir.kernel_target = "host", adir.arena_size = {{[0-9]+}} : i64, adir.persistent_size = 16 : i64}
// PLANNED: func.func @loss_grad(%x: memref<4xf32>) -> (memref<f32>, memref<4xf32>) attributes {{{.*}}adir.arena_size = {{[0-9]+}} : i64
// PLANNED: adir_kernel.exp
// PLANNED: memref.alloc() {adir.offset = {{[0-9]+}} : i64}
