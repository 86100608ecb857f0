// `adir-opt --autodiff examples/mnist_mlp.mlir` prints the seed model's gradient function:
// the fused log_softmax+nll backward, sigmoid's backward from its saved output, both weight
// gradients through matmul transpose flags, and nothing for the input digit.
// RUN: adir-opt --autodiff %S/../../../examples/mnist_mlp.mlir | filecheck %s
// RUN: adir-opt --optimizer=adam --lr=0.001 %S/../../../examples/mnist_mlp.mlir | filecheck %s --check-prefix=ADAM

// CHECK-LABEL: func.func @loss_grad(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> (tensor<f32>, tensor<32x784xf32>, tensor<10x32xf32>)
// CHECK:         %loss = adir.nll %logp, %label : tensor<1x10xf32>, tensor<1xi32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %logits_grad = adir.cross_entropy_grad %logits, %label, %[[ONE]] : tensor<1x10xf32>, tensor<1xi32>, tensor<f32> -> tensor<1x10xf32>
// CHECK-NEXT:    %a_grad = adir.matmul %logits_grad, %w2 : tensor<1x10xf32>, tensor<10x32xf32> -> tensor<1x32xf32>
// CHECK-NEXT:    %w2_grad = adir.matmul %logits_grad, %a {transpose_a} : tensor<1x10xf32>, tensor<1x32xf32> -> tensor<10x32xf32>
// CHECK-NEXT:    %h_grad = adir.sigmoid_grad %a, %a_grad : tensor<1x32xf32>
// CHECK-NEXT:    %w1_grad = adir.matmul %h_grad, %x {transpose_a} : tensor<1x32xf32>, tensor<1x784xf32> -> tensor<32x784xf32>
// CHECK-NEXT:    func.return %loss, %w1_grad, %w2_grad : tensor<f32>, tensor<32x784xf32>, tensor<10x32xf32>

// ADAM: adir.param @w1_exp_avg : tensor<32x784xf32> = #adir.zeros {trainable = false, adir.state_of = @w1}
// ADAM-LABEL: func.func @train_step(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.optimizer = "adam"}
// ADAM:         adir.store %{{[0-9]+}}, @w1 : tensor<32x784xf32>
// ADAM-NEXT:    adir.store %{{[0-9]+}}, @w2 : tensor<10x32xf32>
// ADAM-NEXT:    adir.store %step, @optimizer_step : tensor<f32>
