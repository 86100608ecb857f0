// The int8 function in C: one reference kernel per quantized op, int8 buffers in the arena
// (bufferize + plan-memory), weights and biases as int8/int32 constants (flash), multipliers
// and shifts as int32 tables; the f32 log_softmax after the dequantize keeps its float kernel.
// RUN: adir-opt %S/../quantize-int8/small_cnn.mlir -p 'derive-predict,quantize-int8{samples=4},bufferize,plan-memory' -t c | filecheck %s

// CHECK-DAG:  static const int8_t constant_0[18] = {
// CHECK-DAG:  static const int32_t constant_1[2] = {
// CHECK-DAG:  static const int8_t constant_4[256] = {

// CHECK-LABEL: void predict_int8(const float *x, float *out)
// CHECK-NEXT: {
// CHECK-NEXT:     ADIR_FLOAT_MODE_ENTER
// CHECK-NEXT:     unsigned char *const arena = ARENA_BASE;
// CHECK-NEXT:     int8_t *const x_1 = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QUANTIZE(x, x_1, 36u, {{.*}}f, {{-?[0-9]+}});  /* adir_kernel.quantize at small_cnn.mlir:25 */
// CHECK-NEXT:     int8_t *const t = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QRESHAPE(x_1, t, 36u);  /* adir_kernel.qreshape at small_cnn.mlir:25 */
// CHECK-NEXT:     int8_t *const a = (int8_t *)(void *)(arena + {{[0-9]+}});
// The conv: x [1, 6, 6, 1], out [4, 4, 2], kernel 3x3, stride 1, pad 0, dilation 1, not
// depthwise, zero points, per-channel tables, the fused relu's clamp [-128, 127].
// CHECK-NEXT:     ADIR_QCONV2D(t, constant_0, constant_1, a, 1, 6, 6, 1, 4, 4, 2, 3, 3, 1, 1, 0, 0, 1, 1, 0, {{-?[0-9]+}}, -128, [[M:dims_[0-9]+]], [[S:dims_[0-9]+]], 1, -128, 127);  /* adir_kernel.qconv2d at small_cnn.mlir:25 */
// CHECK-NEXT:     int8_t *const p = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QMAXPOOL2D(a, p, 1, 4, 4, 2, 2, 2, 2, 2, 2, 2, 0, 0, -128, 127);  /* adir_kernel.qmaxpool2d at small_cnn.mlir:32 */
// CHECK-NEXT:     int8_t *const t_1 = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QTRANSPOSE(p, t_1, 4, [[SHAPE:dims_[0-9]+]], [[PERM:dims_[0-9]+]]);  /* adir_kernel.qtranspose at small_cnn.mlir:33 */
// CHECK-NEXT:     int8_t *const flat = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QRESHAPE(t_1, flat, 8u);  /* adir_kernel.qreshape at small_cnn.mlir:33 */
// CHECK-NEXT:     int8_t *const h = (int8_t *)(void *)(arena + {{[0-9]+}});
// One multiplier for all 3 outputs (per_channel 0).
// CHECK-NEXT:     ADIR_QFULLY_CONNECTED(flat, constant_2, constant_3, h, 1, 8, 3, -128, {{-?[0-9]+}}, dims_{{[0-9]+}}, dims_{{[0-9]+}}, 0, -128, 127);  /* adir_kernel.qfully_connected at small_cnn.mlir:36 */
// CHECK-NEXT:     int8_t *const s = (int8_t *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_QLOOKUP(h, constant_4, s, 3u);  /* adir_kernel.qlookup at small_cnn.mlir:38 */
// CHECK-NEXT:     float *const s_1 = (float *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_DEQUANTIZE(s, s_1, 3u, 0.00390625f, -128);  /* adir_kernel.dequantize at small_cnn.mlir:39 */
// CHECK-NEXT:     float *const logp = (float *)(void *)(arena + {{[0-9]+}});
// CHECK-NEXT:     ADIR_LOG_SOFTMAX(s_1, logp, 1, 3, 1);
// CHECK-NEXT:     ADIR_FLOAT_MODE_LEAVE
// CHECK-NEXT:     memcpy(out, logp, 12u);
// CHECK-NEXT: }
