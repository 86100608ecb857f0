// adir-opt --predict derives @predict at batch 1 (--predict-batch=N for another; 0 keeps the
// training batch), independent of the batch @loss trains at.
// RUN: adir-opt --predict %s | filecheck %s
// RUN: adir-opt --predict --predict-batch=4 %s | filecheck %s --check-prefix=FOUR
// RUN: adir-opt --predict --predict-batch=0 %s | filecheck %s --check-prefix=KEEP
// RUN: not adir-opt --predict-batch=4 %s 2>&1 | filecheck %s --check-prefix=ALONE
// RUN: not adir-opt --predict --predict-batch=-1 %s 2>&1 | filecheck %s --check-prefix=NEGATIVE

// CHECK: func.func @predict(%x: tensor<1x4xf32>) -> tensor<1x3xf32>
// FOUR:  func.func @predict(%x: tensor<4x4xf32>) -> tensor<4x3xf32>
// KEEP:  func.func @predict(%x: tensor<16x4xf32>) -> tensor<16x3xf32>
// ALONE: adir-opt: error: --predict-batch needs --predict
// NEGATIVE: adir-opt: error: --predict-batch -1: must be 0 or more

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
func.func @loss(%x: tensor<16x4xf32>, %label: tensor<16xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<16x4xf32>, tensor<3x4xf32> -> tensor<16x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<16x3xf32>, tensor<16xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
