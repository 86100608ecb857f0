/* adir_tuned_variants.h: the public functions of the tuned kernels (tuned/adir_tuned_*.c), which
 * a multiversioned build (targets/adir_multiversion.h) compiles once per version under the
 * version's name. test_c_multiversion.py checks that the list is every one of them.
 *
 * ADIR_TUNED_KERNELS(X) applies X to each name (tuned/adir_tuned_dispatch.c makes the
 * dispatching names with it). Where ADIR_TUNED_RENAME is defined (adir_tuned.h: in a kernel's
 * translation unit), each name becomes its version's: the definitions, their declarations in
 * adir_kernels.h and the calls between tuned kernels alike. */
#ifndef ADIR_TUNED_VARIANTS_H
#define ADIR_TUNED_VARIANTS_H

#define ADIR_TUNED_KERNELS(X) \
    X(adir_tuned_batchnorm) \
    X(adir_tuned_batchnorm_grad) \
    X(adir_tuned_batchnorm_relu) \
    X(adir_tuned_batchnorm_relu_grad) \
    X(adir_tuned_batchnorm_channels) \
    X(adir_tuned_batchnorm_grad_channels) \
    X(adir_tuned_batchnorm_relu_channels) \
    X(adir_tuned_batchnorm_relu_grad_channels) \
    X(adir_tuned_conv2d) \
    X(adir_tuned_conv2d_grad_input) \
    X(adir_tuned_conv2d_grad_weight) \
    X(adir_tuned_conv1d) \
    X(adir_tuned_conv1d_grad_input) \
    X(adir_tuned_conv1d_grad_weight) \
    X(adir_tuned_conv2d_gemm) \
    X(adir_tuned_conv2d_grad_input_gemm) \
    X(adir_tuned_conv2d_grad_weight_gemm) \
    X(adir_conv_implicit_floats) \
    X(adir_conv2d_implicit) \
    X(adir_conv2d_grad_input_implicit) \
    X(adir_conv2d_grad_weight_implicit) \
    X(adir_tuned_conv2d_depthwise) \
    X(adir_tuned_conv2d_grad_input_depthwise) \
    X(adir_tuned_conv2d_grad_weight_depthwise) \
    X(adir_depthwise_lanes_floats) \
    X(adir_conv2d_grad_weight_depthwise_lanes) \
    X(adir_conv2d_grad_input_depthwise_lanes) \
    X(adir_depthwise_same_floats) \
    X(adir_depthwise_same_planes) \
    X(adir_tuned_conv2d_depthwise_3x3) \
    X(adir_tuned_conv2d_grad_input_depthwise_3x3) \
    X(adir_tuned_conv2d_grad_weight_depthwise_3x3) \
    X(adir_tuned_matmul) \
    X(adir_tuned_maxpool2d) \
    X(adir_tuned_maxpool2d_grad) \
    X(adir_tuned_sgd_update) \
    X(adir_tuned_momentum_update) \
    X(adir_tuned_adam_update) \
    X(adir_tuned_matmul_sgd_update_general) \
    X(adir_tuned_matmul_momentum_update) \
    X(adir_tuned_matmul_adam_update) \
    X(adir_tuned_matmul_sgd_update) \
    X(adir_conv2d_pointwise) \
    X(adir_conv2d_grad_input_pointwise) \
    X(adir_conv2d_grad_weight_pointwise) \
    X(adir_pointwise_takes) \
    X(adir_pointwise_strided_chunk) \
    X(adir_conv2d_pointwise_strided) \
    X(adir_conv2d_grad_input_pointwise_strided)

#if defined(ADIR_TUNED_RENAME)
#define adir_tuned_batchnorm ADIR_VARIANT_NAME(adir_tuned_batchnorm)
#define adir_tuned_batchnorm_grad ADIR_VARIANT_NAME(adir_tuned_batchnorm_grad)
#define adir_tuned_batchnorm_relu ADIR_VARIANT_NAME(adir_tuned_batchnorm_relu)
#define adir_tuned_batchnorm_relu_grad ADIR_VARIANT_NAME(adir_tuned_batchnorm_relu_grad)
#define adir_tuned_batchnorm_channels ADIR_VARIANT_NAME(adir_tuned_batchnorm_channels)
#define adir_tuned_batchnorm_grad_channels ADIR_VARIANT_NAME(adir_tuned_batchnorm_grad_channels)
#define adir_tuned_batchnorm_relu_channels ADIR_VARIANT_NAME(adir_tuned_batchnorm_relu_channels)
#define adir_tuned_batchnorm_relu_grad_channels ADIR_VARIANT_NAME(adir_tuned_batchnorm_relu_grad_channels)
#define adir_tuned_conv2d ADIR_VARIANT_NAME(adir_tuned_conv2d)
#define adir_tuned_conv2d_grad_input ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_input)
#define adir_tuned_conv2d_grad_weight ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_weight)
#define adir_tuned_conv1d ADIR_VARIANT_NAME(adir_tuned_conv1d)
#define adir_tuned_conv1d_grad_input ADIR_VARIANT_NAME(adir_tuned_conv1d_grad_input)
#define adir_tuned_conv1d_grad_weight ADIR_VARIANT_NAME(adir_tuned_conv1d_grad_weight)
#define adir_tuned_conv2d_gemm ADIR_VARIANT_NAME(adir_tuned_conv2d_gemm)
#define adir_tuned_conv2d_grad_input_gemm ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_input_gemm)
#define adir_tuned_conv2d_grad_weight_gemm ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_weight_gemm)
#define adir_conv_implicit_floats ADIR_VARIANT_NAME(adir_conv_implicit_floats)
#define adir_conv2d_implicit ADIR_VARIANT_NAME(adir_conv2d_implicit)
#define adir_conv2d_grad_input_implicit ADIR_VARIANT_NAME(adir_conv2d_grad_input_implicit)
#define adir_conv2d_grad_weight_implicit ADIR_VARIANT_NAME(adir_conv2d_grad_weight_implicit)
#define adir_tuned_conv2d_depthwise ADIR_VARIANT_NAME(adir_tuned_conv2d_depthwise)
#define adir_tuned_conv2d_grad_input_depthwise ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_input_depthwise)
#define adir_tuned_conv2d_grad_weight_depthwise ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_weight_depthwise)
#define adir_depthwise_lanes_floats ADIR_VARIANT_NAME(adir_depthwise_lanes_floats)
#define adir_conv2d_grad_weight_depthwise_lanes ADIR_VARIANT_NAME(adir_conv2d_grad_weight_depthwise_lanes)
#define adir_conv2d_grad_input_depthwise_lanes ADIR_VARIANT_NAME(adir_conv2d_grad_input_depthwise_lanes)
#define adir_depthwise_same_floats ADIR_VARIANT_NAME(adir_depthwise_same_floats)
#define adir_depthwise_same_planes ADIR_VARIANT_NAME(adir_depthwise_same_planes)
#define adir_tuned_conv2d_depthwise_3x3 ADIR_VARIANT_NAME(adir_tuned_conv2d_depthwise_3x3)
#define adir_tuned_conv2d_grad_input_depthwise_3x3 ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_input_depthwise_3x3)
#define adir_tuned_conv2d_grad_weight_depthwise_3x3 ADIR_VARIANT_NAME(adir_tuned_conv2d_grad_weight_depthwise_3x3)
#define adir_tuned_matmul ADIR_VARIANT_NAME(adir_tuned_matmul)
#define adir_tuned_maxpool2d ADIR_VARIANT_NAME(adir_tuned_maxpool2d)
#define adir_tuned_maxpool2d_grad ADIR_VARIANT_NAME(adir_tuned_maxpool2d_grad)
#define adir_tuned_sgd_update ADIR_VARIANT_NAME(adir_tuned_sgd_update)
#define adir_tuned_momentum_update ADIR_VARIANT_NAME(adir_tuned_momentum_update)
#define adir_tuned_adam_update ADIR_VARIANT_NAME(adir_tuned_adam_update)
#define adir_tuned_matmul_sgd_update_general ADIR_VARIANT_NAME(adir_tuned_matmul_sgd_update_general)
#define adir_tuned_matmul_momentum_update ADIR_VARIANT_NAME(adir_tuned_matmul_momentum_update)
#define adir_tuned_matmul_adam_update ADIR_VARIANT_NAME(adir_tuned_matmul_adam_update)
#define adir_tuned_matmul_sgd_update ADIR_VARIANT_NAME(adir_tuned_matmul_sgd_update)
#define adir_conv2d_pointwise ADIR_VARIANT_NAME(adir_conv2d_pointwise)
#define adir_conv2d_grad_input_pointwise ADIR_VARIANT_NAME(adir_conv2d_grad_input_pointwise)
#define adir_conv2d_grad_weight_pointwise ADIR_VARIANT_NAME(adir_conv2d_grad_weight_pointwise)
#define adir_pointwise_takes ADIR_VARIANT_NAME(adir_pointwise_takes)
#define adir_pointwise_strided_chunk ADIR_VARIANT_NAME(adir_pointwise_strided_chunk)
#define adir_conv2d_pointwise_strided ADIR_VARIANT_NAME(adir_conv2d_pointwise_strided)
#define adir_conv2d_grad_input_pointwise_strided ADIR_VARIANT_NAME(adir_conv2d_grad_input_pointwise_strided)
#endif

#endif /* ADIR_TUNED_VARIANTS_H */
