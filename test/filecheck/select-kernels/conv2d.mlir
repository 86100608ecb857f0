// select-kernels' choice among adir's tuned conv2d kernels (select_kernels/tuned.py), and the
// C that calls them with their scratch buffer:
// - unpadded stride 1 (LeNet's): the direct tiles, no scratch;
// - padded, or stride 2: a GEMM over im2col panels of every tap by min(P * Q, 64) output
//   pixels, taps x panel x 4 bytes of scratch (here 4 x 3 x 3 = 36 taps: 36 x 64 x 4 = 9216,
//   and 36 x 16 x 4 = 2304 for the 4 x 4 output of the stride-2 conv), which plan-memory may
//   shrink to a panel of 16 taps (4 on a Cortex-M): 16 x 64 x 4 = 4096 bytes, 16 x 16 x 4 =
//   1024 (adir.kernel_scratch_min);
// - pointwise (1x1, stride 1, unpadded): a GEMM on the image itself, no scratch; its weight
//   gradient needs the panel, 4 taps x 64 pixels x 4 = 1024 bytes (then no smaller one);
// - depthwise (groups = channels = outputs): a padded plane of 10 x 10, 3 zeros and a row of
//   sums of 8 x 10: (100 + 3 + 80) x 4 = 732 bytes, not shrunk; dilated, it is a GEMM of one
//   output a group (9 taps x 16 pixels x 4 = 576 bytes, under the host's least panel). On a
//   Cortex-M a 3x3 depthwise conv (stride 1 or 2, padding up to 2) takes the register-blocked
//   `_depthwise_3x3` kernels: the larger of the padded input plane (10 x 10) and the stride-1
//   input gradient's padded dy plane (8 + 2 by 8 + 2): 100 x 4 = 400 bytes.
// On a Cortex-M a panel asks for at most 8 KB (the padded conv's: 8192 bytes, a block of 32
// taps), and 1024 x 3 x 3 taps by 16 pixels (589,824 bytes) ask for 8192 there.
// On the host targets a `_gemm` kernel asks instead for its implicit-GEMM path's scratch where
// that is more (select_kernels/tuned.py's implicit_floats: phase planes + a row + 64 floats of
// slack, one offset a tap, and the weights transposed or one sample's dy^T):
// - the stride-2 conv: its 2 x 2 phase planes would be 5 columns wide for 4 output columns,
//   dropping more than an eighth of a tile's pixels, so under 64 taps each kernel column gets
//   a plane of its own, 4 columns wide (the "column planes"): 2 row phases x 3 columns x 4
//   channels x 5 x 4 + 4 + 64 + 36 taps + 36 x 6 = 800 floats (3200 bytes, over its 2304-byte
//   panel);
// - the dilated depthwise conv: its plane would be 8 columns wide for 4 output columns, so
//   column planes too: 3 columns x 8 x 4 + 4 + 64 + 9 + 9 = 182 floats (728 bytes);
// - the pointwise weight gradient: 4 x 8 x 8 + 8 + 64 + 4 + 8 x 8 x 6 = 716 floats (2864 bytes).
// Planned (C), each panel gets what the arena has free at its op, at least its minimum: the
// padded conv 1996 floats of 2304 (what fits under the function's results), the wide conv 684
// (what the others' scratch leaves free at it, over its least of 256), the others all they
// asked for.
// RUN: adir-opt %s -p 'bufferize,select-kernels' | filecheck %s --check-prefixes=CHECK,HOST
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m4f}' | filecheck %s --check-prefixes=CHECK,M4F
// RUN: adir-opt %s -p 'bufferize,select-kernels,plan-memory' -t c | filecheck %s --check-prefix=C
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m4f},plan-memory' -t c | filecheck %s --check-prefix=C-M4F

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %v: tensor<6x4x5x5xf32>,
             %dw: tensor<4x1x3x3xf32>, %pw: tensor<6x4x1x1xf32>, %dy: tensor<2x6x8x8xf32>,
             %big: tensor<1x1024x4x4xf32>, %bw: tensor<2x1024x3x3xf32>)
    -> (tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32>,
        tensor<2x4x4x4xf32>, tensor<2x6x8x8xf32>, tensor<6x4x1x1xf32>, tensor<1x2x4x4xf32>) {
  // CHECK:     adir_kernel.conv2d ins(%x, %v {{.*}}) outs(%valid : memref<2x6x4x4xf32>) {adir.kernel = "tuned"}
  // C:         ADIR_TUNED_CONV2D(x, v, NULL, valid, 2, 4, 8, 8, 6, 4, 4, 5, 5, 1, 1, 0, 0, 1, 1, 1);
  %valid = adir.conv2d %x, %v : tensor<2x4x8x8xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x4x4xf32>
  // HOST:      adir_kernel.conv2d ins(%x, %w {{.*}}) outs(%same, %scratch : memref<2x6x8x8xf32>, memref<9216xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 9216 : i64, adir.kernel_scratch_min = 4096 : i64, padding = array<i64: 1, 1, 1, 1>}
  // M4F:       adir_kernel.conv2d ins(%x, %w {{.*}}) outs(%same, %scratch : memref<2x6x8x8xf32>, memref<8192xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 8192 : i64, adir.kernel_scratch_min = 1024 : i64, padding = array<i64: 1, 1, 1, 1>}
  // C:         ADIR_TUNED_CONV2D_GEMM(x, w, NULL, same, 2, 4, 8, 8, 6, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, (float *)(void *)scratch, 1996);
  %same = adir.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x8x8xf32>
  // HOST:      adir_kernel.conv2d ins(%x, %w {{.*}}) outs(%strided, %scratch_1 : memref<2x6x4x4xf32>, memref<3200xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 3200 : i64, adir.kernel_scratch_min = 1024 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
  // M4F:       adir_kernel.conv2d ins(%x, %w {{.*}}) outs(%strided, %scratch_1 : memref<2x6x4x4xf32>, memref<2304xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 2304 : i64, adir.kernel_scratch_min = 256 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
  // C:         ADIR_TUNED_CONV2D_GEMM(x, w, NULL, strided, 2, 4, 8, 8, 6, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, (float *)(void *)scratch_1, 800);
  %strided = adir.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x4x4xf32>
  // HOST:      adir_kernel.conv2d ins(%x, %dw {{.*}}) outs(%depthwise, %scratch_2 : memref<2x4x8x8xf32>, memref<732xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_depthwise", adir.kernel_scratch = 732 : i64, padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64}
  // M4F:       adir_kernel.conv2d ins(%x, %dw {{.*}}) outs(%depthwise, %scratch_2 : memref<2x4x8x8xf32>, memref<400xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_depthwise_3x3", adir.kernel_scratch = 400 : i64, padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64}
  // C:         ADIR_TUNED_CONV2D_DEPTHWISE(x, dw, NULL, depthwise, 2, 4, 8, 8, 4, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4, (float *)(void *)scratch_2, 183);
  // C-M4F:     ADIR_TUNED_CONV2D_DEPTHWISE_3X3(x, dw, NULL, depthwise, 2, 4, 8, 8, 4, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4, (float *)(void *)scratch_{{[0-9]+}}, 100);
  %depthwise = adir.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x8x8xf32>
  // HOST:      adir_kernel.conv2d ins(%x, %dw {{.*}}) outs(%dilated, %scratch_3 : memref<2x4x4x4xf32>, memref<728xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 728 : i64, dilation = array<i64: 2, 2>, groups = 4 : i64}
  // M4F:       adir_kernel.conv2d ins(%x, %dw {{.*}}) outs(%dilated, %scratch_3 : memref<2x4x4x4xf32>, memref<576xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 576 : i64, adir.kernel_scratch_min = 256 : i64, dilation = array<i64: 2, 2>, groups = 4 : i64}
  %dilated = adir.conv2d %x, %dw {dilation = array<i64: 2, 2>, groups = 4 : i64} : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x4x4xf32>
  // CHECK:     adir_kernel.conv2d ins(%x, %pw {{.*}}) outs(%pointwise : memref<2x6x8x8xf32>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm"}
  // C:         ADIR_TUNED_CONV2D_GEMM(x, pw, NULL, pointwise, 2, 4, 8, 8, 6, 8, 8, 1, 1, 1, 1, 0, 0, 1, 1, 1, NULL, 0);
  %pointwise = adir.conv2d %x, %pw : tensor<2x4x8x8xf32>, tensor<6x4x1x1xf32> -> tensor<2x6x8x8xf32>
  // HOST:      adir_kernel.conv2d_grad_weight ins(%x, %dy {{.*}}) outs(%pointwise_dw, %scratch_4 : memref<6x4x1x1xf32>, memref<2864xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_grad_weight_gemm", adir.kernel_scratch = 2864 : i64, kernel_size = array<i64: 1, 1>}
  // M4F:       adir_kernel.conv2d_grad_weight ins(%x, %dy {{.*}}) outs(%pointwise_dw, %scratch_4 : memref<6x4x1x1xf32>, memref<1024xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_grad_weight_gemm", adir.kernel_scratch = 1024 : i64, kernel_size = array<i64: 1, 1>}
  // C:         ADIR_TUNED_CONV2D_GRAD_WEIGHT_GEMM(x, dy, pointwise_dw, 2, 4, 8, 8, 6, 8, 8, 1, 1, 1, 1, 0, 0, 1, 1, 1, (float *)(void *)scratch_4, 716);
  %pointwise_dw = adir.conv2d_grad_weight %x, %dy {kernel_size = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x6x8x8xf32> -> tensor<6x4x1x1xf32>
  // HOST:      adir_kernel.conv2d ins(%big, %bw {{.*}}) outs(%wide, %scratch_5 : memref<1x2x4x4xf32>, memref<589824xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 589824 : i64, adir.kernel_scratch_min = 1024 : i64, padding = array<i64: 1, 1, 1, 1>}
  // M4F:       adir_kernel.conv2d ins(%big, %bw {{.*}}) outs(%wide, %scratch_5 : memref<1x2x4x4xf32>, memref<8192xi8>) {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 8192 : i64, adir.kernel_scratch_min = 256 : i64, padding = array<i64: 1, 1, 1, 1>}
  // C:         ADIR_TUNED_CONV2D_GEMM(big, bw, NULL, wide, 1, 1024, 4, 4, 2, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, (float *)(void *)scratch_5, 684);
  %wide = adir.conv2d %big, %bw {padding = array<i64: 1, 1, 1, 1>} : tensor<1x1024x4x4xf32>, tensor<2x1024x3x3xf32> -> tensor<1x2x4x4xf32>
  func.return %valid, %same, %strided, %depthwise, %dilated, %pointwise, %pointwise_dw, %wide
      : tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>,
        tensor<2x6x8x8xf32>, tensor<6x4x1x1xf32>, tensor<1x2x4x4xf32>
}
