// --c-board writes a Cortex-M build next to the model: startup code, a linker script whose RAM
// length is the budget (--c-ram), a Makefile, and for CMake builds the board's interface library
// and toolchain file; with --c-kernels=cmsis-dsp the CMSIS-DSP
// wrappers come along and the Makefile compiles CMSIS-DSP's sources (the model's add is
// CMSIS-DSP's on the board's Cortex-M4F; its matmul stays adir's, which is faster there). Bad budgets and flag
// combinations are diagnostics. The C names and the CMake library take the input file's name
// (`cortex_m_`, `cortex_m`) when no --c-prefix is given.
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-ram=192K %s
// RUN: ls %t | filecheck %s --check-prefix=FILES
// RUN: filecheck %s --check-prefix=LD < %t/mps2_an386.ld
// RUN: filecheck %s --check-prefix=MAKE < %t/Makefile
// RUN: filecheck %s --check-prefix=CMAKE < %t/CMakeLists.txt
// RUN: filecheck %s --check-prefix=TOOLCHAIN < %t/arm-none-eabi.cmake
// RUN: rm -rf %t && adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-kernels=cmsis-dsp %s
// RUN: ls %t | filecheck %s --check-prefix=CMSIS-FILES
// RUN: filecheck %s --check-prefix=CMSIS-MAKE < %t/Makefile
// RUN: not adir-opt --optimizer=sgd --c-board=mps2-an386 %s 2>&1 | filecheck %s --check-prefix=NO-DIR
// RUN: not adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-ram=8K %s 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not adir-opt --optimizer=sgd --emit-c=%t --c-board=mps2-an386 --c-ram=lots %s 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not adir-opt --optimizer=sgd --c-kernels=cmsis-dsp %s 2>&1 | filecheck %s --check-prefix=KERNELS
// RUN: not adir-opt --optimizer=sgd --emit-c=%t --c-ram=64K %s 2>&1 | filecheck %s --check-prefix=RAM

// FILES:     CMakeLists.txt
// FILES:     Makefile
// FILES:     adir_board.h
// FILES-NOT: adir_cmsis_dsp
// FILES:     model.c
// FILES:     mps2_an386.ld
// FILES:     startup_mps2_an386.c

// LD: RAM budget of 196608 bytes
// LD: FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4194304
// LD: RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 196608

// MAKE:     CPU = -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
// MAKE-NOT: CMSIS_DSP
// MAKE:     -Tmps2_an386.ld
// MAKE:     QEMU_FLAGS = -M mps2-an386

// CMAKE:      add_library(adir_runtime STATIC
// CMAKE-NOT:  cortex_m_model.c
// CMAKE:      add_library(cortex_m STATIC
// CMAKE-NEXT: cortex_m_model.c
// CMAKE-NEXT: )
// CMAKE:      target_link_libraries(cortex_m PUBLIC adir_runtime)
// CMAKE:      add_library(cortex_m_board INTERFACE)
// CMAKE-NEXT: target_sources(cortex_m_board INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/startup_mps2_an386.c)
// CMAKE:      target_link_options(cortex_m_board INTERFACE {{.*}} -T${CMAKE_CURRENT_SOURCE_DIR}/mps2_an386.ld

// TOOLCHAIN: set(CMAKE_C_COMPILER arm-none-eabi-gcc)
// TOOLCHAIN: set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard -ffp-contract=off

// CMSIS-FILES: adir_cmsis_dsp.c
// CMSIS-FILES: adir_cmsis_dsp.h
// CMSIS-MAKE:  $(error this model calls CMSIS-DSP: make CMSIS_DSP=<the unpacked cmsisdsp sdist>)
// CMSIS-MAKE:  $(CMSIS_DSP)/Source/MatrixFunctions/arm_mat_mult_f32.c
// CMSIS-MAKE:  CPPFLAGS += -D__GNUC_PYTHON__ -DARM_MATH_LOOPUNROLL -isystem $(CMSIS_DSP)/Include -isystem $(CMSIS_DSP)/PrivateInclude

// NO-DIR: adir-opt: error: --c-board needs --emit-c=DIR and a main of your own, not --c-main
// SMALL: adir-opt: error: --c-ram 8K: a RAM budget of 8192 bytes does not hold the stack and heap (16384 + 4096 bytes)
// SIZE: adir-opt: error: --c-ram lots: 'lots' is not a size in bytes (e.g. 262144, 256K, 1M)
// KERNELS: adir-opt: error: --c-kernels needs --plan-memory or --emit-c=DIR
// RAM: adir-opt: error: --c-ram needs --c-board

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %x2 = adir.add %x, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %logits = adir.matmul %x2, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
