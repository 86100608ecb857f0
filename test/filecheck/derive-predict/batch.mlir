// derive-predict{batch=N}: @predict takes a batch of its own (dim 0 of every input), whatever
// the training batch. A reshape, a broadcast or a slice that spells out the traced batch (as
// the importer writes them) is rewritten where the batch provably keeps a dim of its own.
// RUN: adir-opt %s --split-input-file -p 'derive-predict{batch=1}' | filecheck %s
// RUN: adir-opt %s --split-input-file -p 'derive-predict{batch=16}' | filecheck %s --check-prefix=SIXTEEN
// RUN: adir-opt %s --split-input-file -p 'derive-predict' | filecheck %s --check-prefix=KEEP

adir.param @w : tensor<10x784xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @b : tensor<10xf32> = #adir.zeros

// A flatten written with the batch: [8, 784] is [1, 784] at batch 1; the slice along dim 1
// reads the whole batch ([0:8] becomes [0:1]); the broadcast keeps the batch in its dim.
// CHECK-LABEL: func.func @predict(%x: tensor<1x1x28x28xf32>) -> tensor<1x5xf32> {
// CHECK:         adir.reshape %x {shape = array<i64: 1, 784>} : tensor<1x1x28x28xf32> -> tensor<1x784xf32>
// CHECK:         adir.matmul {{.*}} -> tensor<1x10xf32>
// CHECK:         adir.broadcast_to {{.*}} {shape = array<i64: 2, 1, 10>} : tensor<1x10xf32> -> tensor<2x1x10xf32>
// CHECK:         adir.slice {{.*}} {start = array<i64: 0, 0, 0>, stop = array<i64: 1, 1, 5>} : tensor<2x1x10xf32> -> tensor<1x1x5xf32>
// CHECK:         adir.reshape {{.*}} {shape = array<i64: -1, 5>} : tensor<1x1x5xf32> -> tensor<1x5xf32>
// CHECK:         func.return {{.*}} : tensor<1x5xf32>
// SIXTEEN-LABEL: func.func @predict(%x: tensor<16x1x28x28xf32>) -> tensor<16x5xf32> {
// SIXTEEN:         adir.reshape %x {shape = array<i64: 16, 784>}
// SIXTEEN:         adir.slice {{.*}} {start = array<i64: 0, 0, 0>, stop = array<i64: 1, 16, 5>} : tensor<2x16x10xf32> -> tensor<1x16x5xf32>
// KEEP-LABEL:    func.func @predict(%x: tensor<8x1x28x28xf32>) -> tensor<8x5xf32> {
func.func @loss(%x: tensor<8x1x28x28xf32>, %label: tensor<8xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<10x784xf32>
  %b = adir.load @b : tensor<10xf32>
  %f = adir.reshape %x {shape = array<i64: 8, 784>} : tensor<8x1x28x28xf32> -> tensor<8x784xf32>
  %y = adir.matmul %f, %w {transpose_b} : tensor<8x784xf32>, tensor<10x784xf32> -> tensor<8x10xf32>
  %z = adir.add %y, %b : tensor<8x10xf32>, tensor<10xf32> -> tensor<8x10xf32>
  %r = adir.broadcast_to %z {shape = array<i64: 2, 8, 10>} : tensor<8x10xf32> -> tensor<2x8x10xf32>
  %s = adir.slice %r {start = array<i64: 0, 0, 0>, stop = array<i64: 1, 8, 5>} : tensor<2x8x10xf32> -> tensor<1x8x5xf32>
  %logits = adir.reshape %s {shape = array<i64: -1, 5>} : tensor<1x8x5xf32> -> tensor<8x5xf32>
  %l = adir.cross_entropy %logits, %label : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// A hand-written @predict is kept, but takes the batch asked for.
// CHECK-LABEL: func.func @predict(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:    %y = adir.relu %x : tensor<1x4xf32>
// KEEP-LABEL:  func.func @predict(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
func.func @loss(%x: tensor<3x4xf32>, %t: tensor<3x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %l = adir.mse %x, %t : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @predict(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = adir.relu %x : tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
