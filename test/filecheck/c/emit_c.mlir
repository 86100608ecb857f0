// --emit-c writes the model's header and source, the runtime, and with --c-main the training
// program; nothing is printed. A directory that cannot be written is a diagnostic.
// RUN: rm -rf %t && adir-opt --predict --optimizer=sgd --emit-c=%t --c-prefix=net_ --c-main %s | wc -c | filecheck %s --check-prefix=QUIET
// RUN: ls %t | filecheck %s
// RUN: adir-opt --optimizer=sgd --memory-report --emit-c=%t %s 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not adir-opt --optimizer=sgd --emit-c=/proc/adir-cannot %s 2>&1 | filecheck %s --check-prefix=UNWRITABLE

// QUIET: {{^ *}}0{{$}}
// CHECK: adir_init.h
// CHECK: adir_kernels.h
// CHECK: adir_matmul.c
// CHECK: net_main.c
// CHECK: net_model.c
// CHECK: net_model.h
// REPORT: memory plan of @train_step
// UNWRITABLE: /proc/adir-cannot: error: cannot write the C output

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
