// --c-package lays the --emit-c directory out for a firmware's build system: a Zephyr module
// (the flat files plus zephyr/) or an Arduino library (library.properties, the C in src/).
// Combinations that cannot work are diagnostics, before anything is written.
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-prefix=net_ --c-package=zephyr %s
// RUN: ls %t %t/zephyr | filecheck %s --check-prefix=ZEPHYR
// RUN: filecheck %s --check-prefix=ZEPHYR-CMAKE < %t/zephyr/CMakeLists.txt
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-prefix=net_ --c-package=arduino %s
// RUN: ls %t %t/src | filecheck %s --check-prefix=ARDUINO
// RUN: not adir-opt --optimizer=sgd --c-package=zephyr %s 2>&1 | filecheck %s --check-prefix=NO-DIR
// RUN: not adir-opt --optimizer=sgd --emit-c=%t --c-package=zephyr --c-board=mps2-an386 %s 2>&1 | filecheck %s --check-prefix=BOARD
// RUN: not adir-opt --predict --optimizer=sgd --emit-c=%t --c-package=arduino --c-main %s 2>&1 | filecheck %s --check-prefix=MAIN

// ZEPHYR:      CMakeLists.txt
// ZEPHYR:      net_model.c
// ZEPHYR:      zephyr
// ZEPHYR:      zephyr:
// ZEPHYR-NEXT: CMakeLists.txt
// ZEPHYR-NEXT: Kconfig
// ZEPHYR-NEXT: module.yml

// ZEPHYR-CMAKE:      if(CONFIG_NET)
// ZEPHYR-CMAKE-NEXT:     zephyr_library_named(net)
// ZEPHYR-CMAKE:          ${ZEPHYR_CURRENT_MODULE_DIR}/net_model.c

// ARDUINO:      library.properties
// ARDUINO-NEXT: src
// ARDUINO:      src:
// ARDUINO-NOT:  CMakeLists.txt
// ARDUINO:      net_model.c
// ARDUINO-NEXT: net_model.h

// NO-DIR: adir-opt: error: --c-package needs --emit-c=DIR
// BOARD:  adir-opt: error: --c-package=zephyr builds with its own startup code, not --c-board's
// MAIN:   adir-opt: error: --c-package=arduino: a sketch is the program, not --c-main

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
