// adir-opt --recompute on the DS-CNN: the output of each ReLU (and of the first dropout) is
// recomputed from the batchnorm's input, which its gradient keeps anyway, instead of being kept
// through the forward pass: the SGD step's arena's lower bound drops from 614,640 to 373,504
// bytes (the first relu, before a dropout, keeps a 1-bit mask of 1,008 bytes that the recomputed
// dropout's chain does not replace). fuse-batchnorm-relu runs after it: each recomputed
// batchnorm and relu become one op, and the first layer's mask goes (its gradient is fused into
// the batchnorm's, which reads the forward's input instead), 1,008 bytes less; the plan,
// 376,592, is that bound and one smallest im2col panel of the tuned convolutions (4,096 bytes,
// at the peak: `--c-kernels=reference` plans 372,496; select_kernels/tuned.py, "Scratch").
// RUN: adir-opt --optimizer=sgd --recompute --plan-memory %S/../../../examples/ds_cnn.mlir 2> %t.report | filecheck %s
// RUN: filecheck %s --input-file=%t.report --check-prefix=REPORT

// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    adir.arena_size = 376592 : i64
// The first layer's batchnorm and relu run again (one op) in the backward pass, for the dropout:
// CHECK:         adir_kernel.batchnorm_relu ins(%c1, {{.*}}) outs(%a1_recomputed, {{.*}}) {adir.recomputed, adir.kernel = "tuned", adir.kernel_call = "batchnorm_relu_channels"}
// CHECK:         adir_kernel.dropout ins(%a1_recomputed, %step : {{.*}}) outs(%d1_recomputed : {{.*}}) {adir.recomputed

// REPORT:      recompute-activations: @train_step: arena lower bound 614640 -> 373504 bytes
// REPORT-NEXT:   recomputed %d1 (adir.dropout, 32000 bytes), 3 op(s)
// REPORT-NEXT:   recomputed %dw1_a (adir.relu, 32000 bytes), 2 op(s)
