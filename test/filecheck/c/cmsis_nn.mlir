// The int8 DS-CNN with CMSIS-NN for a DSP core (Cortex-M4/M7): its nine convolutions, the
// global average and the classifier are CMSIS-NN calls (select-kernels recorded each on its op); the
// layout changes and the quantize/dequantize ends stay on adir's reference kernels. Scratch
// buffers live in the arena: the 10x4 conv's im2col, 2 int16 columns of 40 (160 bytes), and the
// average pool's 64 int32 sums (256 bytes); the 3x3 depthwise and 1x1 convs need none on DSP.
// RUN: adir-opt %S/../../../examples/ds_cnn.mlir -p 'derive-predict,quantize-int8{samples=4},bufferize,select-kernels{kernels=cmsis-nn target=cortex-m4f},plan-memory' -t c | filecheck %s

// CHECK:      #include "adir_kernels.h"
// CHECK-NEXT: #include "arm_nnfunctions.h"
// CHECK:      /* CMSIS-NN's 'dsp' build (the scratch buffers are sized for
// CHECK:      #define ADIR_CMSIS_NN_CHECK(status) ((void)(status))

// CHECK-LABEL: void predict_int8(const float *x, float *out)
// CHECK:      ADIR_QUANTIZE(x, x_1, 490u,
// CHECK-NEXT: int8_t *const t = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT: ADIR_QRESHAPE(x_1, t, 490u);
// CHECK-NEXT: int8_t *const a1 = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT: int8_t *const scratch = (int8_t *)(void *)(arena + {{[0-9]+}});
// The padding (4, 5, 1, 1) is TFLite's SAME for stride 2: CMSIS-NN gets top 4 and left 1.
// CHECK-NEXT: ADIR_CMSIS_NN_CHECK(arm_convolve_wrapper_s8(&(const cmsis_nn_context){.buf = scratch, .size = 160}, &(const cmsis_nn_conv_params){.input_offset = {{-?[0-9]+}}, .output_offset = -128, .stride = {.w = 2, .h = 2}, .padding = {.w = 1, .h = 4}, .dilation = {.w = 1, .h = 1}, .activation = {.min = -128, .max = 127}}, &(const cmsis_nn_per_channel_quant_params){.multiplier = (int32_t *)dims_{{[0-9]+}}, .shift = (int32_t *)dims_{{[0-9]+}}}, &(const cmsis_nn_dims){.n = 1, .h = 49, .w = 10, .c = 1}, t, &(const cmsis_nn_dims){.n = 64, .h = 10, .w = 4, .c = 1}, constant_{{[0-9]+}}, &(const cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = 64}, constant_{{[0-9]+}}, &(const cmsis_nn_dims){.n = 1, .h = 25, .w = 5, .c = 64}, a1));  /* adir_kernel.qconv2d at ds_cnn.mlir:197 */
// CHECK-COUNT-4: ADIR_CMSIS_NN_CHECK(arm_depthwise_conv_wrapper_s8(&(const cmsis_nn_context){.buf = NULL, .size = 0}, &(const cmsis_nn_dw_conv_params){.input_offset = 128, .output_offset = -128, .ch_mult = 1, .stride = {.w = 1, .h = 1}, .padding = {.w = 1, .h = 1}
// CHECK:      int8_t *const scratch_1 = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT: ADIR_CMSIS_NN_CHECK(arm_avgpool_s8(&(const cmsis_nn_context){.buf = scratch_1, .size = 256}, &(const cmsis_nn_pool_params){.stride = {.w = 1, .h = 1}, .padding = {.w = 0, .h = 0}, .activation = {.min = -128, .max = 127}}, &(const cmsis_nn_dims){.n = 1, .h = 25, .w = 5, .c = 64}, pw4_a, &(const cmsis_nn_dims){.n = 1, .h = 25, .w = 5, .c = 1}, &(const cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = 64}, pool));  /* adir_kernel.qavgpool2d at ds_cnn.mlir:273 */
// CHECK:      ADIR_CMSIS_NN_CHECK(arm_fully_connected_s8(&(const cmsis_nn_context){.buf = NULL, .size = 0}, &(const cmsis_nn_fc_params){.input_offset = 128, .filter_offset = 0, .output_offset = {{-?[0-9]+}}, .activation = {.min = -128, .max = 127}}, &(const cmsis_nn_per_tensor_quant_params){.multiplier = {{[0-9]+}}, .shift = {{-?[0-9]+}}}, &(const cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = 64}, flat, &(const cmsis_nn_dims){.n = 64, .h = 1, .w = 1, .c = 12}, constant_{{[0-9]+}}, &(const cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = 12}, constant_{{[0-9]+}}, &(const cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = 12}, logits));  /* adir_kernel.qfully_connected at ds_cnn.mlir:277 */
// CHECK-NEXT: float *const logits_1 = (float *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT: ADIR_DEQUANTIZE(logits, logits_1, 12u,

// On Helium (target=mve) arm_fully_connected_s8 reads each output's bias + input_offset * (its
// weights' sum) from its scratch buffer (an int32 per output: 32 * 4 = 128 bytes for the seed
// MLP's first layer), which arm_vector_sum_s8 fills just before.
// RUN: adir-opt %S/../../../examples/mnist_mlp.mlir -p 'derive-predict,quantize-int8{samples=4},bufferize,select-kernels{kernels=cmsis-nn target=cortex-m55},plan-memory' -t c | filecheck %s --check-prefix=MVE
// MVE-LABEL: void predict_int8(const float *x, float *out)
// MVE:       int8_t *const scratch = (int8_t *)(void *)(arena + {{[0-9]+}});
// MVE-NEXT:  ADIR_CMSIS_NN_CHECK(arm_vector_sum_s8((int32_t *)(void *)scratch, 784, 32, constant_0, [[OFFSET:-?[0-9]+]], 0, constant_1));
// MVE-NEXT:  ADIR_CMSIS_NN_CHECK(arm_fully_connected_s8(&(const cmsis_nn_context){.buf = scratch, .size = 128}, &(const cmsis_nn_fc_params){.input_offset = [[OFFSET]], .filter_offset = 0,
// MVE:       ADIR_QLOOKUP(h, constant_2, a, 32u);  /* adir_kernel.qlookup at mnist_mlp.mlir:18 */
