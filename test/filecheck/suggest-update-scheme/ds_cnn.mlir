// suggest-update-scheme on MLPerf Tiny's DS-CNN (examples/ds_cnn_torch.mlir, batch 1, SGD, the
// Cortex-M4F's kernels): for 128 KB it grows the scheme from the classifier back, taking the
// last pointwise conv's weights whole (116,576 bytes of SRAM) and recording the scheme on the
// module; for 16 KB nothing fits, not even an eighth of the classifier's channels above the
// forward pass's own 65,472-byte arena: a located error, exit 1.
// RUN: adir-opt %S/../../../examples/ds_cnn_torch.mlir --train=suggested --sram=128K --optimizer=sgd --lr=0.01 --c-target=cortex-m4f --plan-memory 2>&1 | filecheck %s
// RUN: not adir-opt %S/../../../examples/ds_cnn_torch.mlir --train=suggested --sram=16K --optimizer=sgd --plan-memory -o /dev/null 2>&1 | filecheck %s --check-prefix=NOFIT

// CHECK:      suggest-update-scheme: --train=all@fc,features.30
// CHECK-NEXT:   SRAM 116,576 bytes of sram=131,072 (arena 97,072, trainable parameters 19,504, optimizer state 0)
// CHECK-NEXT:   steps (trained values, SRAM bytes):
// CHECK-NEXT:           780      67,888  all@fc
// CHECK-NEXT:         4,876     116,576  all@fc,features.30
// CHECK:      builtin.module attributes {{{.*}}adir.update_scheme = "all@fc,features.30"

// NOFIT: ds_cnn_torch.mlir: error: suggest-update-scheme: no scheme fits sram=16384: even channels:0.125@fc needs 65984 bytes of SRAM
