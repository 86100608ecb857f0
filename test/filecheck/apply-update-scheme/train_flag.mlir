// `adir-opt --train=SCHEME` applies the scheme before autodiff: with bias+last:1 only @l1_b and
// layer l2 train; @l1_w (4x2 floats, 32 bytes) is frozen in flash; with channels:1@l2+bias,
// l2's weight trains its first row (4 floats in RAM) and the other 2 rows are in flash.
// RUN: adir-opt %s --train=bias+last:1 --optimizer=sgd --lr=0.5 --plan-memory --memory-report -o /dev/null 2>&1 | filecheck %s --check-prefix=LAST
// RUN: adir-opt %s --train=channels:1@l2+bias --optimizer=sgd --lr=0.5 --plan-memory --memory-report -o /dev/null 2>&1 | filecheck %s --check-prefix=CHANNELS

adir.param @l1_w : tensor<4x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32> {adir.layer = "l1"}
adir.param @l1_b : tensor<4xf32> = dense<[0.5, 1.5, 2.5, 3.5]> : tensor<4xf32> {adir.layer = "l1", adir.bias}
adir.param @l2_w : tensor<3x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 1.0, 2.0, 3.0]]> : tensor<3x4xf32> {adir.layer = "l2"}
adir.param @l2_b : tensor<3xf32> = dense<[0.5, 1.5, 2.5]> : tensor<3xf32> {adir.layer = "l2", adir.bias}

func.func @loss(%x: tensor<1x2xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @l1_w : tensor<4x2xf32>
  %b1 = adir.load @l1_b : tensor<4xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x2xf32>, tensor<4x2xf32> -> tensor<1x4xf32>
  %hb = adir.add %h, %b1 : tensor<1x4xf32>, tensor<4xf32> -> tensor<1x4xf32>
  %w2 = adir.load @l2_w : tensor<3x4xf32>
  %b2 = adir.load @l2_b : tensor<3xf32>
  %z = adir.matmul %hb, %w2 {transpose_b} : tensor<1x4xf32>, tensor<3x4xf32> -> tensor<1x3xf32>
  %zb = adir.add %z, %b2 : tensor<1x3xf32>, tensor<3xf32> -> tensor<1x3xf32>
  %l = adir.cross_entropy %zb, %label : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// 16 + 48 + 12 bytes of trainable parameters; 32 bytes of frozen ones.
// LAST: trainable parameters{{ +}}76
// LAST: frozen parameters{{ +}}32 
// 16 + 16 + 12 bytes trainable (l1_b, the first row of l2_w, l2_b); 32 (l1_w) + 32 (2 rows).
// CHANNELS: trainable parameters{{ +}}44
// CHANNELS: frozen parameters{{ +}}64 
