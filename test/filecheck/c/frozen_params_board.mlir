// The board's RAM budget (--c-ram) counts what the functions write, not the frozen parameters,
// which are constants in flash: @w1 (256 KB, frozen) and a trainable @w2 fit 64K of RAM; with
// @set_w1 writing @w1 (the SETTER lines), @w1 is in RAM and the model does not fit.
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-prefix= --c-board=mps2-an386 --c-ram=64K %s
// RUN: filecheck %s < %t/model.c
// RUN: sed 's|// SETTER: ||' %s | not adir-opt --optimizer=sgd --emit-c=%t.ram --c-board=mps2-an386 --c-ram=64K 2>&1 | filecheck %s --check-prefix=RAM

adir.param @w1 : tensor<16x4096xf32> = dense<0.5> : tensor<16x4096xf32> {trainable = false}
adir.param @w2 : tensor<2x16xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

func.func @loss(%x: tensor<1x4096xf32>, %t: tensor<1x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<16x4096xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x4096xf32>, tensor<16x4096xf32> -> tensor<1x16xf32>
  %w2 = adir.load @w2 : tensor<2x16xf32>
  %y = adir.matmul %h, %w2 {transpose_b} : tensor<1x16xf32>, tensor<2x16xf32> -> tensor<1x2xf32>
  %l = adir.mse %y, %t : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// SETTER: func.func @set_w1(%v: tensor<16x4096xf32>) {
// SETTER:   adir.store %v, @w1 : tensor<16x4096xf32>
// SETTER:   func.return
// SETTER: }

// CHECK:     static float w2[32];
// CHECK:     static const float w1[65536] = {
// CHECK-NEXT:    0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
// RAM: stdin:8:1: error: C backend: the model needs 262368 bytes of RAM (256.2 KiB), more than the 45056 (44.0 KiB) of RAM that --c-ram=65536 leaves
