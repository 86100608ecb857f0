// The seed model: the 784-32-10 MLP that adir grew from, exactly as the origin trained it, so
// that memory and speed compare like for like. Batch 1, no biases, a sigmoid hidden layer,
// log_softmax and the negative log-likelihood of the label.
//
// Weights use PyTorch's nn.Linear layout [out, in] (so the matmuls read them with
// transpose_b, never transposing them in memory) and nn.Linear's default initialisation,
// kaiming_uniform with a = sqrt(5), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
//
//   adir-opt examples/mnist_mlp.mlir                       parse, verify, print
//   adir-run examples/mnist_mlp.mlir --func loss --random-inputs 0

adir.param @w1 : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @w2 : tensor<10x32xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 2>

func.func @loss(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<32x784xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x784xf32>, tensor<32x784xf32> -> tensor<1x32xf32>
  %a = adir.sigmoid %h : tensor<1x32xf32>
  %w2 = adir.load @w2 : tensor<10x32xf32>
  %logits = adir.matmul %a, %w2 {transpose_b} : tensor<1x32xf32>, tensor<10x32xf32> -> tensor<1x10xf32>
  %logp = adir.log_softmax %logits : tensor<1x10xf32>
  %loss = adir.nll %logp, %label : tensor<1x10xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
