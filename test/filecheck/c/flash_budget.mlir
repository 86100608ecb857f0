// --c-flash=SIZE: the flash budget of the board's linker script. @w1, 16 x 4096 f32 = 262,144
// bytes of frozen data in flash, fits 300K and not 128K (the C backend's check of the static
// data: 64K of RAM leaves 45,056 bytes after the stack and heap, plus 131,072 of flash).
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-ram=64K --c-flash=300K %s
// RUN: filecheck %s < %t/mps2_an386.ld
// RUN: not adir-opt --optimizer=sgd --emit-c=%t.small --c-board=mps2-an386 --c-ram=64K --c-flash=128K %s 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not adir-opt --optimizer=sgd --emit-c=%t.big --c-board=mps2-an386 --c-flash=8M %s 2>&1 | filecheck %s --check-prefix=BIG
// RUN: not adir-opt --optimizer=sgd --emit-c=%t.noboard --c-flash=1M %s 2>&1 | filecheck %s --check-prefix=NOBOARD

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

// CHECK: FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 307200
// CHECK: RAM (rwx) : ORIGIN = {{.*}}, LENGTH = 65536
// SMALL: flash_budget.mlir:10:1: error: C backend: the model needs 262376 bytes of static data (256.2 KiB), more than the 176128 (172.0 KiB)
// BIG: adir-opt: error: --c-flash 8M: mps2-an386 has 4194304 bytes of flash, not 8388608
// NOBOARD: adir-opt: error: --c-flash needs --c-board
