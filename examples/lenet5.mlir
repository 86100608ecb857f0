// LeNet-5 (LeCun et al., 1998) on one 28x28 digit, batch 1, as PyTorch users write it today:
// two 5x5 convolutions with relu and 2x2 max pooling, then three fully connected layers
// (256 -> 120 -> 84 -> 10) with biases and relu, and the cross-entropy of the label.
//
//   1x1x28x28 -conv1 5x5x6-> 1x6x24x24 -pool-> 1x6x12x12 -conv2 5x5x16-> 1x16x8x8 -pool->
//   1x16x4x4 -flatten-> 1x256 -fc1-> 1x120 -fc2-> 1x84 -fc3-> 1x10
//
// Weights use PyTorch's layouts (nn.Conv2d [out, in, kh, kw], nn.Linear [out, in], read with
// transpose_b) and PyTorch's default initialisation: kaiming_uniform with a = sqrt(5) for the
// weights, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the biases
// (fan_in = 25, 150, 256, 120, 84).
//
//   adir-opt examples/lenet5.mlir                          parse, verify, print
//   adir-opt --autodiff examples/lenet5.mlir               append @loss_grad
//   adir-run examples/lenet5.mlir --func loss --random-inputs 0

adir.param @conv1_w : tensor<6x1x5x5xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @conv1_b : tensor<6xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 2>
adir.param @conv2_w : tensor<16x6x5x5xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
adir.param @conv2_b : tensor<16xf32> = #adir.uniform<low = -0.08164965809277261, high = 0.08164965809277261, seed = 4>
adir.param @fc1_w : tensor<120x256xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 5>
adir.param @fc1_b : tensor<120xf32> = #adir.uniform<low = -0.0625, high = 0.0625, seed = 6>
adir.param @fc2_w : tensor<84x120xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 7>
adir.param @fc2_b : tensor<84xf32> = #adir.uniform<low = -0.09128709291752768, high = 0.09128709291752768, seed = 8>
adir.param @fc3_w : tensor<10x84xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 9>
adir.param @fc3_b : tensor<10xf32> = #adir.uniform<low = -0.1091089451179962, high = 0.1091089451179962, seed = 10>

func.func @loss(%x: tensor<1x1x28x28xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.loss} {
  %conv1_w = adir.load @conv1_w : tensor<6x1x5x5xf32>
  %conv1_b = adir.load @conv1_b : tensor<6xf32>
  %c1 = adir.conv2d %x, %conv1_w, %conv1_b : tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<1x6x24x24xf32>
  %a1 = adir.relu %c1 : tensor<1x6x24x24xf32>
  %p1 = adir.maxpool2d %a1 {kernel_size = array<i64: 2, 2>} : tensor<1x6x24x24xf32> -> tensor<1x6x12x12xf32>
  %conv2_w = adir.load @conv2_w : tensor<16x6x5x5xf32>
  %conv2_b = adir.load @conv2_b : tensor<16xf32>
  %c2 = adir.conv2d %p1, %conv2_w, %conv2_b : tensor<1x6x12x12xf32>, tensor<16x6x5x5xf32>, tensor<16xf32> -> tensor<1x16x8x8xf32>
  %a2 = adir.relu %c2 : tensor<1x16x8x8xf32>
  %p2 = adir.maxpool2d %a2 {kernel_size = array<i64: 2, 2>} : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
  %flat = adir.reshape %p2 {shape = array<i64: 1, 256>} : tensor<1x16x4x4xf32> -> tensor<1x256xf32>
  %fc1_w = adir.load @fc1_w : tensor<120x256xf32>
  %fc1_b = adir.load @fc1_b : tensor<120xf32>
  %m3 = adir.matmul %flat, %fc1_w {transpose_b} : tensor<1x256xf32>, tensor<120x256xf32> -> tensor<1x120xf32>
  %h3 = adir.add %m3, %fc1_b : tensor<1x120xf32>, tensor<120xf32> -> tensor<1x120xf32>
  %a3 = adir.relu %h3 : tensor<1x120xf32>
  %fc2_w = adir.load @fc2_w : tensor<84x120xf32>
  %fc2_b = adir.load @fc2_b : tensor<84xf32>
  %m4 = adir.matmul %a3, %fc2_w {transpose_b} : tensor<1x120xf32>, tensor<84x120xf32> -> tensor<1x84xf32>
  %h4 = adir.add %m4, %fc2_b : tensor<1x84xf32>, tensor<84xf32> -> tensor<1x84xf32>
  %a4 = adir.relu %h4 : tensor<1x84xf32>
  %fc3_w = adir.load @fc3_w : tensor<10x84xf32>
  %fc3_b = adir.load @fc3_b : tensor<10xf32>
  %m5 = adir.matmul %a4, %fc3_w {transpose_b} : tensor<1x84xf32>, tensor<10x84xf32> -> tensor<1x10xf32>
  %logits = adir.add %m5, %fc3_b : tensor<1x10xf32>, tensor<10xf32> -> tensor<1x10xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x10xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
