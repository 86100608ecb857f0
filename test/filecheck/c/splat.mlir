// A splat stays a splat from the text to the C: the parser keeps one element (the 4000x4000
// parameter below took 1.4 GB to parse and 1.7 GB to print as C, a 104 MB table of 1.0f), the
// IR prints it back as a splat, and the C fills the parameter at init instead of copying a
// table (@w is in RAM: @set_w writes it). A zero constant past one line is `{0}` (C zeroes the
// rest); another splat repeats one line, also for a frozen parameter (@g: no function writes
// it, so it is a constant, adir/param_storage.py).
// RUN: adir-opt %s | filecheck %s --check-prefix=IR
// RUN: adir-opt --plan-memory -t c %s | filecheck %s

adir.param @w : tensor<4000x4000xf32> = dense<1.0> : tensor<4000x4000xf32>
adir.param @v : tensor<3x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>
adir.param @g : tensor<10xf32> = dense<2.0> : tensor<10xf32>

func.func @f(%x: tensor<1x4000xf32>, %a: tensor<3x3xf32>) -> (tensor<1x4000xf32>, tensor<3x3xf32>, tensor<2x5xi32>, tensor<10xf32>) {
  %w = adir.load @w : tensor<4000x4000xf32>
  %y = adir.matmul %x, %w : tensor<1x4000xf32>, tensor<4000x4000xf32> -> tensor<1x4000xf32>
  %z = adir.constant dense<0.0> : tensor<3x3xf32>
  %h = adir.constant dense<0.5> : tensor<3x3xf32>
  %v = adir.load @v : tensor<3x3xf32>
  %s = adir.add %a, %z : tensor<3x3xf32>
  %t = adir.mul %s, %h : tensor<3x3xf32>
  %g = adir.load @g : tensor<10xf32>
  %u = adir.add %t, %v : tensor<3x3xf32>
  adir.store %a, @v : tensor<3x3xf32>
  %i = adir.constant dense<-7> : tensor<2x5xi32>
  func.return %y, %u, %i, %g : tensor<1x4000xf32>, tensor<3x3xf32>, tensor<2x5xi32>, tensor<10xf32>
}

func.func @set_w(%w: tensor<4000x4000xf32>) {
  adir.store %w, @w : tensor<4000x4000xf32>
  func.return
}
// IR: adir.param @w : tensor<4000x4000xf32> = dense<1.000000e+00> : tensor<4000x4000xf32>
// IR: adir.constant dense<0.000000e+00> : tensor<3x3xf32>

// CHECK-NOT: w_initial
// CHECK:      static float w[16000000];
// CHECK-NEXT: static float v[9];
// CHECK-NEXT: static const float v_initial[9] = {
// CHECK-NEXT:     1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f,
// CHECK-NEXT:     9.0f
// CHECK:      static const float g[10] = {
// CHECK-NEXT:     2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f,
// CHECK-NEXT:     2.0f, 2.0f
// CHECK-NEXT: };
// CHECK:      static const int32_t constant_2[10] = {
// CHECK-NEXT:     -7, -7, -7, -7, -7, -7, -7, -7,
// CHECK-NEXT:     -7, -7
// CHECK-NEXT: };
// CHECK-NEXT: static const float constant_1[9] = {
// CHECK-NEXT:     0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
// CHECK-NEXT:     0.5f
// CHECK-NEXT: };
// CHECK-NEXT: static const float constant_0[9] = {0.0f};
// CHECK:      void init(uint32_t seed)
// CHECK:      adir_init_fill(w, 16000000u, 1.0f);
// CHECK-NEXT: memcpy(v, v_initial, sizeof v);
// CHECK-NEXT: }
