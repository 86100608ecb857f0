// A scheme marks what trains among the parameters that name their layer (adir.layer, and
// adir.bias on a bias); layers in declaration order, so last:1 is "fc".
// RUN: adir-opt %s -p 'apply-update-scheme{scheme="bias+last:1"}' | filecheck %s --check-prefix=BIAS_LAST
// RUN: adir-opt %s -p 'apply-update-scheme{scheme="channels:0.5@conv,fc"}' | filecheck %s --check-prefix=CHANNELS
// RUN: adir-opt %s -p 'apply-update-scheme{scheme="channels:1@last:1+bias@conv"}' | filecheck %s --check-prefix=COUNT

adir.param @conv_w : tensor<4x1x1x1xf32> = dense<1.0> : tensor<4x1x1x1xf32> {adir.layer = "conv"}
adir.param @conv_b : tensor<4xf32> = dense<0.0> : tensor<4xf32> {adir.layer = "conv", adir.bias}
adir.param @fc_w : tensor<2x4xf32> = dense<1.0> : tensor<2x4xf32> {adir.layer = "fc"}
adir.param @fc_b : tensor<2xf32> = dense<0.0> : tensor<2xf32> {adir.layer = "fc", adir.bias}
adir.param @stat : tensor<4xf32> = dense<0.0> : tensor<4xf32> {trainable = false}

// BIAS_LAST:      @conv_w {{.*}}{adir.layer = "conv", trainable = false}
// BIAS_LAST-NEXT: @conv_b {{.*}}{adir.layer = "conv", adir.bias}
// BIAS_LAST-NEXT: @fc_w {{.*}}{adir.layer = "fc"}
// BIAS_LAST-NEXT: @fc_b {{.*}}{adir.layer = "fc", adir.bias}
// BIAS_LAST-NEXT: @stat {{.*}}{trainable = false}

// CHANNELS:      @conv_w {{.*}}{adir.layer = "conv", update_fraction = 5.000000e-01 : f32}
// CHANNELS-NEXT: @conv_b {{.*}}{adir.layer = "conv", adir.bias, trainable = false}
// CHANNELS-NEXT: @fc_w {{.*}}{adir.layer = "fc", update_fraction = 5.000000e-01 : f32}
// CHANNELS-NEXT: @fc_b {{.*}}{adir.layer = "fc", adir.bias, trainable = false}

// COUNT:      @conv_w {{.*}}{adir.layer = "conv", trainable = false}
// COUNT-NEXT: @conv_b {{.*}}{adir.layer = "conv", adir.bias}
// COUNT-NEXT: @fc_w {{.*}}{adir.layer = "fc", update_channels = 1 : i64}
// COUNT-NEXT: @fc_b {{.*}}{adir.layer = "fc", adir.bias, trainable = false}
