// The seed MLP's Adam step, reordered: the step counter (which needs nothing the step computes)
// is incremented first; w2's update runs right after the gradient of the hidden layer, the last
// read of the old w2, and before the sigmoid's gradient; w1's update ends the step.
// RUN: adir-opt -p 'autodiff,insert-optimizer{kind=adam lr=0.001},fuse-weight-updates,reorder-updates' %S/../../../examples/mnist_mlp.mlir | filecheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00>
// CHECK-NEXT:    %[[OLD:[0-9]+]] = adir.load @optimizer_step
// CHECK-NEXT:    %step = adir.add %[[OLD]], %[[ONE]]
// CHECK-NEXT:    adir.store %step, @optimizer_step
// CHECK:         %logits_grad = adir.cross_entropy_grad %logits, %label
// CHECK-NEXT:    %a_grad = adir.matmul %logits_grad, %w2 :
// CHECK:         adir.bias_correction %step
// CHECK:         %[[W2:[0-9]+]], %[[M2:[0-9]+]], %[[V2:[0-9]+]] = adir.matmul_adam_update %w2, %w2_exp_avg, %w2_exp_avg_sq, %logits_grad, %a,
// CHECK-NEXT:    adir.store %[[W2]], @w2
// CHECK-NEXT:    adir.store %[[M2]], @w2_exp_avg
// CHECK-NEXT:    adir.store %[[V2]], @w2_exp_avg_sq
// CHECK-NEXT:    %h_grad = adir.sigmoid_grad %a, %a_grad
// CHECK:         %[[W1:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}} = adir.matmul_adam_update %w1, %w1_exp_avg, %w1_exp_avg_sq, %h_grad, %x,
// CHECK-NEXT:    adir.store %[[W1]], @w1
// CHECK:         func.return %loss
