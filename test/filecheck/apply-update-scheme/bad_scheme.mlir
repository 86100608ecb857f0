// A scheme that does not parse, or names what the module lacks: an error, exit 1.
// RUN: not adir-opt %s -p 'apply-update-scheme{scheme="last:3"}' 2>&1 | filecheck %s --check-prefix=LAST
// RUN: not adir-opt %s -p 'apply-update-scheme{scheme="bias@head"}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not adir-opt %s -p 'apply-update-scheme{scheme="channels:1.5"}' 2>&1 | filecheck %s --check-prefix=FRACTION
// RUN: not adir-opt %s -p 'apply-update-scheme{scheme="weights"}' 2>&1 | filecheck %s --check-prefix=TERM
// RUN: not adir-opt %s --train=bias 2>&1 | filecheck %s --check-prefix=FLAG

adir.param @conv_w : tensor<4x1x1x1xf32> = dense<1.0> : tensor<4x1x1x1xf32> {adir.layer = "conv"}
adir.param @fc_w : tensor<2x4xf32> = dense<1.0> : tensor<2x4xf32> {adir.layer = "fc"}

// LAST: error: apply-update-scheme: scheme 'last:3': last:3, but the module has 2 layers
// NAME: error: apply-update-scheme: scheme 'bias@head': no layer 'head' (the module's layers: conv, fc)
// FRACTION: error: apply-update-scheme: scheme 'channels:1.5': channels:1.5 must be a fraction in (0, 1]
// TERM: error: apply-update-scheme: scheme 'weights': unknown term 'weights' (expected all, none, bias, last:K or channels:F, optionally @layers)
// FLAG: error: --train needs --autodiff or --optimizer
