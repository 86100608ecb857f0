// adir-opt --recompute on the DS-CNN: the output of each ReLU (and of the first dropout) is
// recomputed from the batchnorm's input, which its gradient keeps anyway, instead of being kept
// through the forward pass: the SGD step's arena's lower bound drops from 614,640 to 373,504
// bytes (the first relu, before a dropout, keeps a 1-bit mask of 1,008 bytes that the recomputed
// dropout's chain does not replace); the plan, 377,600, is that bound and one smallest im2col
// panel of the tuned convolutions (4,096 bytes, at the peak: `--c-kernels=reference` plans
// 373,504; select_kernels/tuned.py, "Scratch").
// RUN: adir-opt --optimizer=sgd --recompute --plan-memory %S/../../../examples/ds_cnn.mlir 2> %t.report | filecheck %s
// RUN: filecheck %s --input-file=%t.report --check-prefix=REPORT

// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    adir.arena_size = 377600 : i64
// The first layer's batchnorm and relu run again in the backward pass, before relu's gradient:
// CHECK:         adir_kernel.batchnorm ins(%c1, {{.*}}) outs(%n1_recomputed, {{.*}}) {{{.*}}adir.recomputed{{.*}}}
// CHECK-NEXT:    adir_kernel.relu ins(%n1_recomputed : {{.*}}) outs(%n1_recomputed : {{.*}}) {adir.recomputed, adir.kernel = "reference"}

// REPORT:      recompute-activations: @train_step: arena lower bound 614640 -> 373504 bytes
// REPORT-NEXT:   recomputed %d1 (adir.dropout, 32000 bytes), 3 op(s)
// REPORT-NEXT:   recomputed %dw1_a (adir.relu, 32000 bytes), 2 op(s)
