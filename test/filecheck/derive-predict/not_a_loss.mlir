// derive-predict needs the loss function to return a loss op's result.
// RUN: not adir-opt %s -p derive-predict 2>&1 | filecheck %s
// CHECK: not_a_loss.mlir:7:3: error: derive-predict: @loss must return the result of a loss op (its input is the prediction)
func.func @loss(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.loss} {
  %s = adir.sum %x : tensor<2xf32> -> tensor<f32>
  // the returned value is a sum, not a loss
  func.return %s : tensor<f32>
}
