// bufferize: a parameter's buffer takes its symbol as its name where that is a value name, and
// else the symbol with `_` for what a value name cannot hold (`@"my weight"` gave an internal
// error: xDSL refuses `my weight` as a name); a parameter named like bufferize's constants
// keeps its name, and the constant's global takes the next free one.
// RUN: adir-opt %s -p bufferize | filecheck %s

// CHECK:      "memref.global"() <{sym_name = "__constant_1"
// CHECK:      adir.param @"my weight"
// CHECK:      adir.param @"1abc"
// CHECK:      adir.param @__constant_0
// CHECK:      %my_weight = adir_kernel.param @"my weight" : memref<2xf32>
// CHECK-NEXT: %_1abc = adir_kernel.param @"1abc" : memref<2xf32>
// CHECK-NEXT: %__constant = adir_kernel.param @__constant_0 : memref<2xf32>
// CHECK:      memref.get_global @__constant_1 : memref<2xf32>

adir.param @"my weight" : tensor<2xf32> = #adir.zeros
adir.param @"1abc" : tensor<2xf32> = #adir.zeros
adir.param @__constant_0 : tensor<2xf32> = #adir.zeros

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = adir.load @"my weight" : tensor<2xf32>
  %b = adir.load @"1abc" : tensor<2xf32>
  %c = adir.load @__constant_0 : tensor<2xf32>
  %two = adir.constant dense<2.0> : tensor<2xf32>
  %0 = adir.mul %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = adir.add %0, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %2 = adir.add %1, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %3 = adir.mul %2, %two : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %3 : tensor<2xf32>
}
