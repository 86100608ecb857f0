// recompute-activations: %a is read by the forward matmul and, much later, by the tanh's
// gradient; keeping it alive across %e, %g and %m makes the peak (768 bytes: %a, %h, %e, %g).
// Recomputing it from %x (an argument, alive anyway) right before its late use lowers the
// arena's lower bound to 528 bytes; the report says so.
// RUN: adir-opt %s -p 'recompute-activations{report=true}' 2> %t.report | filecheck %s
// RUN: filecheck %s --input-file=%t.report --check-prefix=REPORT
// RUN: adir-opt %s -p 'recompute-activations,reorder-updates,bufferize,plan-memory' | filecheck %s --check-prefix=PLAN
// RUN: adir-opt %s -p 'reorder-updates,bufferize,plan-memory' | filecheck %s --check-prefix=KEPT

adir.param @w : tensor<64x64xf32> = #adir.zeros
func.func @f(%x: tensor<1x64xf32>, %dy: tensor<1x64xf32>) -> (tensor<f32>, tensor<1x64xf32>) {
  %w = adir.load @w : tensor<64x64xf32>
  %a = adir.tanh %x : tensor<1x64xf32>
  %h = adir.matmul %a, %w {transpose_b} : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %e = adir.exp %h : tensor<1x64xf32>
  %g = adir.sigmoid %h : tensor<1x64xf32>
  %m = adir.mul %e, %g : tensor<1x64xf32>
  %s = adir.sum %m {axes = array<i64: 0, 1>} : tensor<1x64xf32> -> tensor<f32>
  %d = adir.matmul %dy, %w : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %da = adir.tanh_grad %a, %d : tensor<1x64xf32>
  func.return %s, %da : tensor<f32>, tensor<1x64xf32>
}

// CHECK-LABEL: func.func @f
// CHECK:         %a = adir.tanh %x : tensor<1x64xf32>
// CHECK-NEXT:    %h = adir.matmul %a, %w {transpose_b}
// CHECK:         %d = adir.matmul %dy, %w
// CHECK-NEXT:    %a_recomputed = adir.tanh %x {adir.recomputed} : tensor<1x64xf32>
// CHECK-NEXT:    %da = adir.tanh_grad %a_recomputed, %d

// REPORT:      recompute-activations: @f: arena lower bound 768 -> 528 bytes
// REPORT-NEXT:   recomputed %a (adir.tanh, 256 bytes), 1 op(s)

// PLAN: func.func @f({{.*}} attributes {adir.arena_size = 528 : i64, adir.arena_lower_bound = 528 : i64
// KEPT: func.func @f({{.*}} attributes {adir.arena_size = 768 : i64, adir.arena_lower_bound = 768 : i64
