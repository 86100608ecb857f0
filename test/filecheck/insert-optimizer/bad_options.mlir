// Bad optimizer options are errors located in the pass pipeline, exit code 1.
// RUN: not adir-opt %s -p 'autodiff,insert-optimizer{kind=sgd lr=-0.1}' 2>&1 | filecheck %s --check-prefix=LR
// RUN: not adir-opt %s -p 'autodiff,insert-optimizer{kind=adam beta1=1.0}' 2>&1 | filecheck %s --check-prefix=BETA
// RUN: not adir-opt %s -p 'autodiff,insert-optimizer{kind=rmsprop}' 2>&1 | filecheck %s --check-prefix=KIND
// RUN: not adir-opt %s -p 'autodiff,insert-optimizer{kind=sgd nesterov=true}' 2>&1 | filecheck %s --check-prefix=NESTEROV
// RUN: not adir-opt %s --optimizer=sgd --lr=-1.0 2>&1 | filecheck %s --check-prefix=SHORTCUT
// RUN: not adir-opt %s -p 'insert-optimizer' 2>&1 | filecheck %s --check-prefix=NOGRAD

adir.param @w : tensor<2xf32> = #adir.zeros

func.func @loss(%x: tensor<2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<2xf32>
  %y = adir.mul %x, %w : tensor<2xf32>
  %l = adir.sum %y : tensor<2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// LR: <pass-pipeline>:1:36: error: insert-optimizer: lr must not be negative, got -0.1
// LR-NEXT: autodiff,insert-optimizer{kind=sgd lr=-0.1}
// LR-NEXT: {{^ {35}\^}}
// BETA: <pass-pipeline>:1:37: error: insert-optimizer: beta1 must be in [0, 1), got 1.0
// KIND: <pass-pipeline>:1:27: error: insert-optimizer: kind must be one of sgd, adam, adamw, got rmsprop
// NESTEROV: <pass-pipeline>:1:36: error: insert-optimizer: nesterov needs a momentum, got true
// The shortcut refuses it at the flag, not inside a pipeline the user did not write.
// SHORTCUT: adir-opt: error: --lr -1.0: the learning rate must not be negative
// NOGRAD: error: insert-optimizer: expected a gradient function (run autodiff first)
