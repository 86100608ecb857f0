// select-kernels on float ops, for every target: adir's tuned conv takes an unpadded stride-1
// conv on its direct tiles and a padded one as a GEMM over im2col panels in scratch (18 taps x
// 36 pixels x 4 bytes = 2592; conv2d.mlir has the other choices and a refusal); CMSIS-DSP takes a plain matmul and refuses a transposed lhs,
// which then falls back to the tuned matmul; on the Cortex-M4F it refuses the plain matmul too,
// measured slower there than adir's; `kernels=reference` records no refusal at all.
// RUN: adir-opt %s -p 'bufferize,select-kernels' | filecheck %s --check-prefixes=CHECK,TUNED,HOST
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=x86-avx2}' | filecheck %s --check-prefixes=CHECK,TUNED,AVX2
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=x86-avx512}' | filecheck %s --check-prefixes=CHECK,TUNED,AVX512
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m4f}' | filecheck %s --check-prefixes=CHECK,TUNED,M4F
// RUN: adir-opt %s -p 'bufferize,select-kernels{target=cortex-m55}' | filecheck %s --check-prefixes=CHECK,TUNED,M55
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-dsp target=cortex-m4f}' | filecheck %s --check-prefixes=CHECK,DSP,DSP-M4F,M4F
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-dsp}' | filecheck %s --check-prefixes=CHECK,DSP,DSP-HOST,HOST
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=reference}' | filecheck %s --check-prefixes=CHECK,REFERENCE,HOST
// The C prints what was recorded: the tuned macro, the reference macro, the CMSIS-DSP wrapper.
// RUN: adir-opt %s -p 'bufferize,select-kernels{kernels=cmsis-dsp},plan-memory' -t c | filecheck %s --check-prefix=C

// HOST:   builtin.module attributes {adir.kernel_target = "host"}
// AVX2:   builtin.module attributes {adir.kernel_target = "x86-avx2"}
// AVX512: builtin.module attributes {adir.kernel_target = "x86-avx512"}
// M4F:    builtin.module attributes {adir.kernel_target = "cortex-m4f"}
// M55:    builtin.module attributes {adir.kernel_target = "cortex-m55"}
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>, %a: tensor<4x5xf32>,
             %b: tensor<5x6xf32>, %c: tensor<5x4xf32>) -> (tensor<1x3x4x4xf32>,
             tensor<1x3x6x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  // TUNED:     adir_kernel.conv2d {{.*}} {adir.kernel = "tuned"}
  // DSP:       adir_kernel.conv2d {{.*}} {adir.kernel = "tuned"}
  // REFERENCE: adir_kernel.conv2d {{.*}} {adir.kernel = "reference"}
  // C:         ADIR_TUNED_CONV2D(x, w, NULL, valid,
  %valid = adir.conv2d %x, %w : tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x4x4xf32>
  // TUNED:     adir_kernel.conv2d {{.*}} {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 2592 : i64, padding = array<i64: 1, 1, 1, 1>}
  // DSP:       adir_kernel.conv2d {{.*}} {adir.kernel = "tuned", adir.kernel_call = "conv2d_gemm", adir.kernel_scratch = 2592 : i64, padding = array<i64: 1, 1, 1, 1>}
  // REFERENCE: adir_kernel.conv2d {{.*}} {adir.kernel = "reference", padding = array<i64: 1, 1, 1, 1>}
  // C:         ADIR_TUNED_CONV2D_GEMM(x, w, NULL, same, 1, 2, 6, 6, 3, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, (float *)(void *)scratch, 648);
  %same = adir.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x6x6xf32>
  // TUNED:     adir_kernel.matmul {{.*}} {adir.kernel = "tuned"}
  // DSP-HOST:  adir_kernel.matmul {{.*}} {adir.kernel = "cmsis-dsp", adir.kernel_call = "adir_cmsis_matmul"}
  // DSP-M4F:   adir_kernel.matmul {{.*}} {adir.kernel = "tuned", adir.kernel_refused = {"cmsis-dsp" = "adir_cmsis_matmul: slower than adir's on cortex-m4f: {{.*}}"}}
  // REFERENCE: adir_kernel.matmul {{.*}} {adir.kernel = "reference"}
  // C:         adir_cmsis_matmul(a, b, plain, 1, 4, 6, 5, 1);
  %plain = adir.matmul %a, %b : tensor<4x5xf32>, tensor<5x6xf32> -> tensor<4x6xf32>
  // TUNED:     adir_kernel.matmul {{.*}} {adir.kernel = "tuned", transpose_a}
  // DSP:       adir_kernel.matmul {{.*}} {adir.kernel = "tuned", adir.kernel_refused = {"cmsis-dsp" = "transpose_a: CMSIS-DSP has no transposed operand"}, transpose_a}
  // REFERENCE: adir_kernel.matmul {{.*}} {adir.kernel = "reference", transpose_a}
  // C:         ADIR_TUNED_MATMUL(c, b, transposed, 1, 4, 6, 5, 1, 0, 1);
  %transposed = adir.matmul %c, %b {transpose_a} : tensor<5x4xf32>, tensor<5x6xf32> -> tensor<4x6xf32>
  func.return %valid, %same, %plain, %transposed : tensor<1x3x4x4xf32>, tensor<1x3x6x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
