// The header: sizes as #defines (arena and persistent bytes from the plan, the frozen bytes,
// each parameter's index and element count, each argument's element count) and the API.
// RUN: adir-opt --predict --optimizer=sgd --plan-memory -t 'c{prefix="mnist_" file="header"}' %S/../../../examples/mnist_mlp.mlir | filecheck %s

// CHECK:      #ifndef MNIST_MODEL_H
// CHECK:      #include <stdint.h>
// CHECK:      #define MNIST_ARENA_BYTES 320
// CHECK-NEXT: #define MNIST_PERSISTENT_BYTES 101632
// CHECK-NEXT: #define MNIST_FROZEN_BYTES 0
// CHECK:      #define MNIST_NUM_PARAMS 2
// CHECK-NEXT: #define MNIST_PARAM_W1 0
// CHECK-NEXT: #define MNIST_W1_SIZE 25088
// CHECK-NEXT: #define MNIST_PARAM_W2 1
// CHECK-NEXT: #define MNIST_W2_SIZE 320
// CHECK:      #define MNIST_TRAIN_STEP_X_SIZE 784
// CHECK:      void mnist_init(uint32_t seed);
// CHECK:      const float *mnist_param_data(size_t index);
// CHECK-NEXT: float *mnist_param_writable(size_t index);
// CHECK:      float mnist_loss(const float *x, const int32_t *label);
// CHECK:      float mnist_train_step(const float *x, const int32_t *label);
// CHECK:      /* Inference: the model's prediction for a batch (eval mode); writes it to `out`. */
// CHECK-NEXT: void mnist_predict(const float *x, float *out);
// CHECK:      #endif /* MNIST_MODEL_H */
