// Frozen parameters cost no RAM (adir/param_storage.py): a parameter no function writes is a
// `static const` array with its values in place (flash on a device), which init leaves alone
// and param_writable refuses (NULL); the kernels read it through `const float *` (-Werror
// builds of it: test/python/test_c_frozen_params.py). @w1 and @b1 are frozen with data and a
// seedless initializer; @r is frozen but drawn from a seed at init, so it stays in RAM; @w2
// trains: RAM, with one flash copy of its data that init copies (so init resets it), and @w2's
// momentum buffer is optimizer state.
// RUN: adir-opt --optimizer=sgd --plan-memory -t c %s | filecheck %s
// RUN: adir-opt --optimizer=sgd --plan-memory -t 'c{file="header"}' %s | filecheck %s --check-prefix=HEADER
// The report: RAM is the arena, @w2 (trainable), its momentum buffer (optimizer state) and @r;
// flash is @w1 and @b1, @w2's initial values and the constants (the learning rate, momentum).
// RUN: adir-opt -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd momentum=0.9},bufferize,plan-memory{report=true}' %s 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

adir.param @w1 : tensor<2x3xf32> = dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]> : tensor<2x3xf32> {trainable = false}
adir.param @b1 : tensor<2xf32> = #adir.zeros {trainable = false}
adir.param @r : tensor<2x2xf32> = #adir.uniform<seed = 3> {trainable = false}
adir.param @w2 : tensor<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>

func.func @loss(%x: tensor<1x3xf32>, %t: tensor<1x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<2x3xf32>
  %b1 = adir.load @b1 : tensor<2xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x3xf32>, tensor<2x3xf32> -> tensor<1x2xf32>
  %hb = adir.add %h, %b1 : tensor<1x2xf32>, tensor<2xf32> -> tensor<1x2xf32>
  %r = adir.load @r : tensor<2x2xf32>
  %hr = adir.matmul %hb, %r : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  %w2 = adir.load @w2 : tensor<2x2xf32>
  %y = adir.matmul %hr, %w2 {transpose_b} : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  %l = adir.mse %y, %t : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK:      /* Parameters and optimizer state in RAM: persistent across steps. */
// CHECK-NEXT: static float r[4];
// CHECK-NEXT: static float w2[4];
// CHECK-NEXT: static const float w2_initial[4] = {
// CHECK-NEXT:     1.0f, 2.0f, 3.0f, 4.0f
// CHECK-NEXT: };
// CHECK-EMPTY:
// CHECK-NEXT: /* Frozen parameters: no function writes them, so they are constants (read-only;
// CHECK-NEXT:  * a device keeps them in flash). */
// CHECK-NEXT: static const float w1[6] = {
// CHECK-NEXT:     0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f
// CHECK-NEXT: };
// CHECK-NEXT: static const float b1[2] = {
// CHECK-NEXT:     0.0f, 0.0f
// CHECK-NEXT: };
// CHECK-NOT:  w1_initial
// CHECK:      void init(uint32_t seed)
// CHECK-NEXT: {
// CHECK-NEXT:     adir_init_uniform(r, 4u, 0.0f, 1.0f, UINT64_C(3) + (uint64_t)seed * ADIR_INIT_SEED_STEP);
// CHECK-NEXT:     memcpy(w2, w2_initial, sizeof w2);
// CHECK-NEXT: }
// CHECK:      const float *param_data(size_t index)
// CHECK-NEXT: {
// CHECK-NEXT:     const float *const data[4] = {w1, b1, r, w2};
// CHECK:      float *param_writable(size_t index)
// CHECK-NEXT: {
// CHECK-NEXT:     float *const data[4] = {NULL, NULL, r, w2};
// CHECK:      float train_step(const float *x, const float *t)
// CHECK:          ADIR_TUNED_MATMUL(x, w1, h, 1, 1, 2, 3, 0, 1, 1);

// HEADER:      #define PERSISTENT_BYTES 32
// HEADER-NEXT: #define FROZEN_BYTES 32
// HEADER:      const float *param_data(size_t index);
// HEADER-NEXT: float *param_writable(size_t index);

// REPORT:      memory plan of @train_step
// REPORT:      RAM                     112 bytes (arena and what the functions write)
// REPORT-NEXT:   arena                          64
// REPORT-NEXT:   trainable parameters           16
// REPORT-NEXT:   optimizer state                16
// REPORT-NEXT:   other mutable state             0 (e.g. running statistics)
// REPORT-NEXT:   frozen, drawn at init          16 (a seeded initializer; dense data keeps them in flash)
// REPORT-NEXT: flash                    56 bytes (read only)
// REPORT-NEXT:   frozen parameters              32 (no function writes them)
// REPORT-NEXT:   initial values                 16 (dense data init copies to RAM)
// REPORT-NEXT:   constants                       8
