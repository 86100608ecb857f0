// `adir-opt --autodiff --plan-memory examples/mnist_mlp.mlir` prints the planned IR, and with
// SGD the whole training step needs 320 bytes of arena beside the parameters; the plan can be
// drawn as an SVG.
// RUN: adir-opt --autodiff --plan-memory %S/../../../examples/mnist_mlp.mlir | filecheck %s
// RUN: adir-opt --optimizer=sgd --lr=0.1 --plan-memory %S/../../../examples/mnist_mlp.mlir | filecheck %s --check-prefix=SGD
// RUN: rm -f %t.svg && adir-opt --optimizer=sgd --lr=0.1 --bufferize %S/../../../examples/mnist_mlp.mlir -p 'plan-memory{svg="%t.svg"}' > /dev/null
// RUN: filecheck %s --input-file=%t.svg --check-prefix=SVG

// CHECK: func.func @loss_grad(%x: memref<1x784xf32>, %label: memref<1xi32>) -> (memref<f32>, memref<32x784xf32>, memref<10x32xf32>)
// CHECK: %h = memref.alloc() {adir.offset = {{[0-9]+}} : i64} : memref<1x32xf32>

// SGD: builtin.module attributes {adir.kernel_target = "host", adir.arena_size = 320 : i64, adir.persistent_size = 101632 : i64}
// SGD: func.func @train_step({{.*}}) -> memref<f32> attributes {adir.optimizer = "sgd", adir.arena_size = 320 : i64, adir.arena_lower_bound = 320 : i64
// Both weight updates write their weights in place, with no gradient buffer, and each runs as
// soon as it may (reorder-updates): w2's right after the last read of the old w2 (the gradient
// of the hidden layer), which lets the sigmoid's gradient overwrite %h, its last use.
// SGD: adir_kernel.matmul ins(%logits_grad, %w2 : {{.*}}) outs(%a_grad : memref<1x32xf32>)
// SGD-NEXT: %[[LR:[0-9]+]] = memref.get_global
// SGD-NEXT: adir_kernel.matmul_sgd_update ins(%w2, %logits_grad, %h, %[[LR]] : {{.*}}) outs(%w2 : memref<10x32xf32>) {adir.kernel = "tuned", transpose_a}
// SGD-NEXT: adir_kernel.sigmoid_grad ins(%h, %a_grad : {{.*}}) outs(%h : memref<1x32xf32>)
// SGD-NEXT: adir_kernel.matmul_sgd_update ins(%w1, %h, %x, %[[LR]] : {{.*}}) outs(%w1 : memref<32x784xf32>) {adir.kernel = "tuned", transpose_a}

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: @train_step: arena 320 bytes
// SVG: <rect {{.*}}<title>%h: 128 bytes at offset 0, live at ops
