// bufferize: parameters become their own buffers, constants read-only globals, an elementwise
// op writes over an operand that dies there, and a parameter update writes the parameter.
// RUN: adir-opt %s -p bufferize | filecheck %s

adir.param @w : tensor<4xf32> = #adir.zeros

func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = adir.load @w : tensor<4xf32>
  %lr = adir.constant dense<0.5> : tensor<f32>
  %e = adir.exp %x : tensor<4xf32>
  %t = adir.tanh %e : tensor<4xf32>
  %y = adir.mul %t, %w : tensor<4xf32>
  %s = adir.mul %lr, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %w_new = adir.sub %w, %s : tensor<4xf32>
  adir.store %w_new, @w : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK: "memref.global"() <{sym_name = "__constant_0", type = memref<f32>, initial_value = dense<5.000000e-01> : tensor<f32>, sym_visibility = "private", constant}>
// CHECK-LABEL: func.func @step(%x: memref<4xf32>) -> memref<4xf32> {
// CHECK-NEXT:    %w = adir_kernel.param @w : memref<4xf32>
// CHECK-NEXT:    %[[LR:.+]] = memref.get_global @__constant_0 : memref<f32>
// CHECK-NEXT:    %e = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    adir_kernel.exp ins(%x : memref<4xf32>) outs(%e : memref<4xf32>)
// %e dies at the tanh, which writes over it:
// CHECK-NEXT:    adir_kernel.tanh ins(%e : memref<4xf32>) outs(%e : memref<4xf32>)
// and %t dies at the mul, whose result takes its buffer (and is returned in it):
// CHECK-NEXT:    adir_kernel.mul ins(%e, %w : memref<4xf32>, memref<4xf32>) outs(%e : memref<4xf32>)
// CHECK-NEXT:    %s = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    adir_kernel.mul ins(%[[LR]], %x : memref<f32>, memref<4xf32>) outs(%s : memref<4xf32>)
// the update writes @w's own buffer; the store needs no copy:
// CHECK-NEXT:    adir_kernel.sub ins(%w, %s : memref<4xf32>, memref<4xf32>) outs(%w : memref<4xf32>)
// CHECK-NEXT:    func.return %e : memref<4xf32>
