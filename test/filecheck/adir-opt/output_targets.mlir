// Where the output goes (issue 17): `-o -` is stdout, not a file named "-"; a full disk on
// stdout is a diagnostic, exit code 1; `--emit-c` with a directory where a file goes names it
// and leaves DIR as it was, the user's own model.c included. (Devices, FIFOs, links and a
// closed stdout: test/python/test_output_files.py.)
// RUN: rm -rf %t && mkdir -p %t/adir_init.h && echo "/* mine */" > %t/model.c
// RUN: cd %t && adir-opt %s -o - | filecheck %s --check-prefix=STDOUT
// RUN: ls %t | filecheck %s --check-prefix=NO-DASH
// RUN: not adir-opt %s 2>&1 >/dev/full | filecheck %s --check-prefix=FULL
// RUN: not adir-opt --optimizer=sgd --emit-c=%t %s 2>&1 | filecheck %s --check-prefix=IN-THE-WAY
// RUN: filecheck %s --input-file=%t/model.c --check-prefix=MINE
// RUN: ls -a %t | filecheck %s --check-prefix=UNCHANGED

// STDOUT: func.func @loss
// NO-DASH-NOT: {{^-$}}
// FULL: stdout: error: cannot write the output: No space left on device
// IN-THE-WAY: adir_init.h: error: cannot write the C output: Is a directory
// MINE: {{^/\* mine \*/$}}
// UNCHANGED:      {{^\.$}}
// UNCHANGED-NEXT: {{^\.\.$}}
// UNCHANGED-NEXT: {{^adir_init.h$}}
// UNCHANGED-NEXT: {{^model.c$}}
// UNCHANGED-EMPTY:

adir.param @w : tensor<3x4xf32> = #adir.zeros
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
