// A training batchnorm whose output only a relu reads becomes adir.batchnorm_relu, in the
// batchnorm's place (the stores of its statistics stay where they were, after it); the
// batchnorm gradient of that relu's gradient (relu_grad of the relu's output, or mask_grad of
// its relu_mask) becomes adir.batchnorm_relu_grad, which reads the forward's beta; a relu_mask
// left with no reader goes. Where the batchnorm's output has another reader (@residual) or the
// relu's gradient does (@summed), nothing changes.
// RUN: adir-opt %s -p fuse-batchnorm-relu | filecheck %s

adir.param @m : tensor<4xf32> = #adir.zeros {trainable = false}

// CHECK-LABEL: func.func @pair
func.func @pair(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %da: tensor<2x4x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>) {
  %m0 = adir.load @m : tensor<4xf32>
  %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %b, %m0, %m0 : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  adir.store %rm, @m : tensor<4xf32>
  %a = adir.relu %n : tensor<2x4x3x3xf32>
  %dn = adir.relu_grad %a, %da : tensor<2x4x3x3xf32>
  %dx, %dg, %db = adir.batchnorm_grad %x, %g, %mean, %invstd, %dn : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %a, %dx, %dg : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>
}
// CHECK-NEXT:    %m0 = adir.load @m : tensor<4xf32>
// CHECK-NEXT:    %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %g, %b, %m0, %m0 : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    adir.store %rm, @m : tensor<4xf32>
// CHECK-NEXT:    %dx, %dg, %db = adir.batchnorm_relu_grad %x, %g, %b, %mean, %invstd, %da : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    func.return %a, %dx, %dg

// CHECK-LABEL: func.func @masked
func.func @masked(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %da: tensor<2x4x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %g, %g, %g : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %a = adir.relu %n : tensor<2x4x3x3xf32>
  %mask = adir.relu_mask %a : tensor<2x4x3x3xf32> -> tensor<3xi32>
  %dn = adir.mask_grad %mask, %da : tensor<3xi32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %dx, %dg, %db = adir.batchnorm_grad %x, %g, %mean, %invstd, %dn : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %a, %dx : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}
// CHECK-NEXT:    %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %g, %g, %g, %g
// CHECK-NEXT:    %dx, %dg, %db = adir.batchnorm_relu_grad %x, %g, %g, %mean, %invstd, %da
// CHECK-NEXT:    func.return %a, %dx

// CHECK-LABEL: func.func @residual
func.func @residual(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %g, %g, %g : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %a = adir.relu %n : tensor<2x4x3x3xf32>
  %s = adir.add %a, %n : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  func.return %s : tensor<2x4x3x3xf32>
}
// CHECK-NEXT:    %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x
// CHECK-NEXT:    %a = adir.relu %n

// CHECK-LABEL: func.func @summed
func.func @summed(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %da: tensor<2x4x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %g, %g, %g : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %a = adir.relu %n : tensor<2x4x3x3xf32>
  %dn = adir.relu_grad %a, %da : tensor<2x4x3x3xf32>
  %dx, %dg, %db = adir.batchnorm_grad %x, %g, %mean, %invstd, %dn : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32> -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %dn, %dx : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}
// The forward pair fuses; the relu's gradient is also returned, so the gradients stay apart.
// CHECK-NEXT:    %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %g, %g, %g, %g
// CHECK-NEXT:    %dn = adir.relu_grad %a, %da
// CHECK-NEXT:    %dx, %dg, %db = adir.batchnorm_grad %x, %g, %mean, %invstd, %dn
