// `adir-opt --autodiff examples/mnist_mlp.mlir` prints the seed model's gradient function:
// the fused log_softmax+nll backward, sigmoid's backward from its saved output, both weight
// gradients through matmul transpose flags, and nothing for the input digit.
// RUN: adir-opt --autodiff %S/../../../examples/mnist_mlp.mlir | filecheck %s
// RUN: adir-opt --optimizer=adam --lr=0.001 %S/../../../examples/mnist_mlp.mlir | filecheck %s --check-prefix=ADAM

// CHECK-LABEL: func.func @loss_grad(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> (tensor<f32>, tensor<32x784xf32>, tensor<10x32xf32>)
// CHECK:         %loss = adir.nll %logp, %label : tensor<1x10xf32>, tensor<1xi32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[DZ:[0-9]+]] = adir.cross_entropy_grad %logits, %label, %[[ONE]] : tensor<1x10xf32>, tensor<1xi32>, tensor<f32> -> tensor<1x10xf32>
// CHECK-NEXT:    %[[DA:[0-9]+]] = adir.matmul %[[DZ]], %w2 : tensor<1x10xf32>, tensor<10x32xf32> -> tensor<1x32xf32>
// CHECK-NEXT:    %[[DW2:[0-9]+]] = adir.matmul %[[DZ]], %a {transpose_a} : tensor<1x10xf32>, tensor<1x32xf32> -> tensor<10x32xf32>
// CHECK-NEXT:    %[[DH:[0-9]+]] = adir.sigmoid_grad %a, %[[DA]] : tensor<1x32xf32>
// CHECK-NEXT:    %[[DW1:[0-9]+]] = adir.matmul %[[DH]], %x {transpose_a} : tensor<1x32xf32>, tensor<1x784xf32> -> tensor<32x784xf32>
// CHECK-NEXT:    func.return %loss, %[[DW1]], %[[DW2]] : tensor<f32>, tensor<32x784xf32>, tensor<10x32xf32>

// ADAM: adir.param @w1_exp_avg : tensor<32x784xf32> = #adir.zeros {trainable = false, adir.state_of = @w1}
// ADAM-LABEL: func.func @train_step(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.optimizer = "adam"}
// ADAM:         adir.store %{{[0-9]+}}, @w1 : tensor<32x784xf32>
// ADAM-NEXT:    adir.store %{{[0-9]+}}, @w2 : tensor<10x32xf32>
// ADAM-NEXT:    adir.store %{{[0-9]+}}, @optimizer_step : tensor<f32>
