// plan-memory{sram=SIZE} (adir-opt --sram=SIZE): a step whose arena plus the static data in RAM
// needs more than SIZE bytes is an error at the op at the peak, naming the largest buffers live
// there. The SGD step below needs exactly 256 bytes: an arena of 128 (%h 2x8 f32 = 64, %logits
// and %logits_grad 2x4 f32 = 32 each, all live at the cross-entropy's gradient; the relu writes
// over %h) and the trainable @w, 4x8 f32 = 128. @frozen (a fill, written by no function) is
// flash and does not count. Momentum adds its buffer, 128 more, and without the fused update
// the 128-byte %w_grad is live at the peak too. The loss function alone writes nothing: its
// 96-byte arena is all it needs (@w is then frozen too, a zero fill in flash).
// RUN: adir-opt --optimizer=sgd --lr=0.1 --plan-memory --sram=256 %s | filecheck %s --check-prefix=FITS
// RUN: adir-opt --optimizer=sgd --lr=0.1 --plan-memory --sram=1K %s | filecheck %s --check-prefix=FITS
// RUN: adir-opt --bufferize -p 'plan-memory{sram=96}' %s | filecheck %s --check-prefix=LOSS-ONLY
// RUN: not adir-opt --optimizer=sgd --lr=0.1 --plan-memory --sram=255 %s 2>&1 | filecheck %s --check-prefix=OVER
// RUN: not adir-opt -p 'autodiff,insert-optimizer{kind=sgd lr=0.1 momentum=0.9},bufferize,plan-memory{sram=256}' %s 2>&1 | filecheck %s --check-prefix=MOMENTUM
// RUN: not adir-opt --optimizer=sgd --lr=0.1 --plan-memory --sram=1.5K %s 2>&1 | filecheck %s --check-prefix=BAD-FLAG
// RUN: not adir-opt --optimizer=sgd --lr=0.1 --plan-memory --sram=0 %s 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not adir-opt --sram=256K %s 2>&1 | filecheck %s --check-prefix=NO-PLAN
// RUN: not adir-opt --bufferize -p 'plan-memory{sram=12X}' %s 2>&1 | filecheck %s --check-prefix=BAD-OPTION

adir.param @frozen : tensor<8x8xf32> = #adir.fill<value = 0.5> {trainable = false}
adir.param @w : tensor<4x8xf32> = #adir.zeros

func.func @loss(%x: tensor<2x8xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %frozen = adir.load @frozen : tensor<8x8xf32>
  %h = adir.matmul %x, %frozen : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %r = adir.relu %h : tensor<2x8xf32>
  %w = adir.load @w : tensor<4x8xf32>
  %logits = adir.matmul %r, %w {transpose_b} : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}

// FITS: adir.arena_size = 128 : i64
// FITS-SAME: adir.persistent_size = 128 : i64

// LOSS-ONLY: adir.arena_size = 96 : i64
// LOSS-ONLY-SAME: adir.persistent_size = 0 : i64

// OVER: sram_budget.mlir:28:3: error: plan-memory: @train_step needs 256 bytes of SRAM (256 bytes: arena 128, trainable parameters 128, optimizer state 0, other mutable state 0), more than sram=255 (255 bytes); the peak, 128 bytes live in 3 buffers, is at op 9 of @train_step (adir_kernel.cross_entropy_grad, located at the op it comes from): %h (64 bytes, from line 24), %logits (32 bytes, from line 27), %logits_grad (32 bytes, from line 28)
// OVER-NEXT: %loss = adir.cross_entropy

// MOMENTUM: sram_budget.mlir:27:3: error: plan-memory: @train_step needs 496 bytes of SRAM (496 bytes: arena 240, trainable parameters 128, optimizer state 128, other mutable state 0), more than sram=256 (256 bytes); the peak, 240 bytes live in 4 buffers, is at op 13 of @train_step (adir_kernel.matmul, located at the op it comes from): %w_grad (128 bytes, from line 27), %h (64 bytes, from line 24), %logits_grad (32 bytes, from line 28), %loss (16 bytes, from line 28)

// BAD-FLAG: adir-opt: error: --sram 1.5K: '1.5K' is not a size in bytes (e.g. 262144, 256K, 1M)
// ZERO: adir-opt: error: --sram 0: '0' is not a size in bytes (e.g. 262144, 256K, 1M)
// NO-PLAN: adir-opt: error: --sram needs --plan-memory or --emit-c=DIR
// BAD-OPTION: error: plan-memory: sram: '12X' is not a size in bytes (e.g. 262144, 256K, 1M)
