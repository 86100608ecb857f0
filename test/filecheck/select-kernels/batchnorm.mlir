// Batchnorm, alone or fused with its relu (fuse-batchnorm-relu), has tuned kernels on the hosts
// (the `_channels` kernels) and on the scalar Cortex-M cores with an FPU (adir_tuned_batchnorm.c);
// elsewhere it keeps the reference and says why.
// RUN: adir-opt %s -p 'bufferize,select-kernels' | filecheck %s --check-prefix=HOST
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m4f}' | filecheck %s --check-prefix=M4F
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m55}' | filecheck %s --check-prefix=M55
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m4f},plan-memory' -t c | filecheck %s --check-prefix=C-M4F

func.func @f(%x: tensor<2x4x5x5xf32>, %v: tensor<4xf32>, %dy: tensor<2x4x5x5xf32>) -> (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) {
  // HOST:  adir_kernel.batchnorm ins({{.*}}) {adir.kernel = "tuned", adir.kernel_call = "batchnorm_channels"}
  // M4F:   adir_kernel.batchnorm ins({{.*}}) {adir.kernel = "tuned"}
  // M55:   adir_kernel.batchnorm ins({{.*}}) {adir.kernel = "reference", adir.kernel_refused = {tuned = "written for scalar cores and hosts, not measured on cortex-m55"}}
  // C-M4F: ADIR_TUNED_BATCHNORM(x, v, v, v, v, y, mean, invstd, rm, rv, 2, 4, 25,
  %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // HOST:  adir_kernel.batchnorm_grad ins({{.*}}) {adir.kernel = "tuned", adir.kernel_call = "batchnorm_grad_channels"}
  // M4F:   adir_kernel.batchnorm_grad ins({{.*}}) {adir.kernel = "tuned"}
  // M55:   adir_kernel.batchnorm_grad ins({{.*}}) {adir.kernel = "reference", adir.kernel_refused = {tuned = "written for scalar cores and hosts, not measured on cortex-m55"}}
  // C-M4F: ADIR_TUNED_BATCHNORM_GRAD(x, v, mean, invstd, dy, dx, dgamma, dbeta, 2, 4, 25);
  %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %v, %mean, %invstd, %dy : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x5x5xf32> -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  // HOST:  adir_kernel.batchnorm_relu ins({{.*}}) {adir.kernel = "tuned", adir.kernel_call = "batchnorm_relu_channels"}
  // M4F:   adir_kernel.batchnorm_relu ins({{.*}}) {adir.kernel = "tuned"}
  // M55:   adir_kernel.batchnorm_relu ins({{.*}}) {adir.kernel = "reference", adir.kernel_refused = {tuned = "written for scalar cores and hosts, not measured on cortex-m55"}}
  // C-M4F: ADIR_TUNED_BATCHNORM_RELU(x, v, v, v, v, a, mean2, invstd2, rm2, rv2, 2, 4, 25,
  %a, %mean2, %invstd2, %rm2, %rv2 = adir.batchnorm_relu %x, %v, %v, %v, %v : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // HOST:  adir_kernel.batchnorm_relu_grad ins({{.*}}) {adir.kernel = "tuned", adir.kernel_call = "batchnorm_relu_grad_channels"}
  // M4F:   adir_kernel.batchnorm_relu_grad ins({{.*}}) {adir.kernel = "tuned"}
  // M55:   adir_kernel.batchnorm_relu_grad ins({{.*}}) {adir.kernel = "reference", adir.kernel_refused = {tuned = "written for scalar cores and hosts, not measured on cortex-m55"}}
  // C-M4F: ADIR_TUNED_BATCHNORM_RELU_GRAD(x, v, v, mean2, invstd2, dy, da, dgamma2, dbeta2, 2, 4, 25);
  %da, %dgamma2, %dbeta2 = adir.batchnorm_relu_grad %x, %v, %v, %mean2, %invstd2, %dy : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x5x5xf32> -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %y, %dx, %a, %da : tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>
}
