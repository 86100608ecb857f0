"""`<prefix>main.c`: a training program around a generated model, for running it with no Python.

    adir-opt --predict --optimizer=sgd --emit-c=out --c-main model.mlir
    cc -std=c99 -O2 out/*.c -o train -lm
    ./train train.bin test.bin 10          # epochs; prints the loss per epoch, test accuracy
    ./train train.bin test.bin 10 0 weights.bin   # seed 0, then writes the trained weights

It needs `@train_step(x, labels[, step])` (`--optimizer`) and `@predict(x) -> scores`
(`--predict`), x of shape [N, ...] f32, labels [N] of i32 or i64 class indices, an optional
rank-0 step counter (dropout's) that the program counts up from 0; @predict's x may have a batch
of its own (`--predict-batch`, by default 1). The dataset files are `ADIRDATA` files (see
`DATASET_FORMAT`); `tools/digits.py` writes them. Batches are read in file order; the last
partial batch of an epoch is dropped, as `drop_last=True` does (of the test set, the last
partial batch of @predict's). The fifth argument names a file to which the program writes every
parameter after training, as one blob (`<prefix>save_params`, `adir/param_blob.py`), which
`adir.frontends.torch_state.load_state_dict` reads back into a torch state_dict.
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, MemRefType, ModuleOp

from adir.backends.c.calls import c_type
from adir.diagnostics import OpError

DATASET_FORMAT = """\
An ADIRDATA file: the 8 bytes "ADIRDATA", then little-endian uint32 count and uint32
features, then `count` records of `features` float32 values and one int32 label."""


def _function(module: ModuleOp, name: str, flag: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise OpError(module, f"C harness: the module has no @{name} (add {flag})")


def harness_source(module: ModuleOp, prefix: str) -> str:
    """The C of the training program for a planned module (see the module docstring)."""
    train = _function(module, "train_step", "--optimizer=...")
    predict = _function(module, "predict", "--predict")
    inputs = [t for t in train.function_type.inputs.data]
    if not 2 <= len(inputs) <= 3 or not all(isinstance(t, MemRefType) for t in inputs):
        raise OpError(train, "C harness: @train_step must take (x, labels) or (x, labels, step)")
    x_type, label_type = inputs[0], inputs[1]
    step_type = inputs[2] if len(inputs) == 3 else None
    shape = x_type.get_shape()  # type: ignore[union-attr]
    batch, features = shape[0], math.prod(shape[1:])
    if (
        label_type.get_shape() != (batch,)  # type: ignore[union-attr]
        or not isinstance(label_type.element_type, IntegerType)  # type: ignore[union-attr]
        or (step_type is not None and step_type.get_shape() != ())  # type: ignore[union-attr]
    ):
        raise OpError(train, "C harness: labels must be [N] class indices, a step rank 0")
    predict_inputs = predict.function_type.inputs.data
    outputs = predict.function_type.outputs.data
    predict_x = predict_inputs[0] if len(predict_inputs) == 1 else None
    if (
        not isinstance(predict_x, MemRefType)
        or predict_x.element_type != x_type.element_type  # type: ignore[union-attr]
        or predict_x.get_shape()[1:] != shape[1:]
        or len(outputs) != 1
    ):
        raise OpError(
            predict,
            "C harness: @predict must take @train_step's x (at any batch), return one value",
        )
    predict_batch = predict_x.get_shape()[0]
    scores = outputs[0]
    classes = scores.get_shape()[-1]  # type: ignore[union-attr]
    if scores.get_shape() != (predict_batch, classes):  # type: ignore[union-attr]
        raise OpError(predict, "C harness: @predict must return scores [N, classes]")
    label_c = c_type(label_type.element_type)  # type: ignore[union-attr]
    step_c = c_type(step_type.element_type) if step_type is not None else None  # type: ignore[union-attr]
    step_arg = ", &step_value" if step_c else ""
    step_decl = f"    {step_c} step_value = 0;\n" if step_c else ""
    step_next = "            step_value = step_value + 1;\n" if step_c else ""
    return f"""\
/* {prefix}main.c: trains the generated model on an ADIRDATA file, with no Python (adir).
 *
 *     {prefix}train TRAIN.bin TEST.bin [EPOCHS [SEED]]
 *
{_comment(DATASET_FORMAT)}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "{prefix}model.h"

#define BATCH {batch}
#define PREDICT_BATCH {predict_batch}
#define MAX_BATCH {max(batch, predict_batch)}
#define FEATURES {features}
#define CLASSES {classes}

typedef struct {{
    FILE *file;
    unsigned long count;
}} dataset;

static int open_dataset(dataset *data, const char *path)
{{
    unsigned char header[16];
    unsigned long features;
    data->file = fopen(path, "rb");
    if (!data->file || fread(header, 1, sizeof header, data->file) != sizeof header ||
        memcmp(header, "ADIRDATA", 8) != 0) {{
        fprintf(stderr, "%s: not an ADIRDATA file\\n", path);
        return 0;
    }}
    data->count = header[8] | (unsigned long)header[9] << 8 | (unsigned long)header[10] << 16 |
                  (unsigned long)header[11] << 24;
    features = header[12] | (unsigned long)header[13] << 8 | (unsigned long)header[14] << 16 |
               (unsigned long)header[15] << 24;
    if (features != FEATURES) {{
        fprintf(stderr, "%s: %lu features per record, the model takes %d\\n", path, features,
                FEATURES);
        return 0;
    }}
    return 1;
}}

/* Reads the next `count` samples; 0 at the end of the file (a partial batch is dropped). */
static int read_batch(dataset *data, float *x, {label_c} *labels, int count)
{{
    int i;
    for (i = 0; i < count; ++i) {{
        int32_t label;
        if (fread(x + (size_t)i * FEATURES, sizeof(float), FEATURES, data->file) != FEATURES ||
            fread(&label, sizeof label, 1, data->file) != 1) {{
            return 0;
        }}
        labels[i] = ({label_c})label;
    }}
    return 1;
}}

static void rewind_dataset(dataset *data) {{ fseek(data->file, 16L, SEEK_SET); }}

/* Writes every parameter to `path` as one blob ({prefix}save_params); 0 on failure. */
static int write_weights(const char *path)
{{
    static unsigned char blob[{prefix.upper()}PARAMS_BLOB_BYTES];
    FILE *file = fopen(path, "wb");
    int written = file && {prefix}save_params(blob, sizeof blob) == 0 &&
                  fwrite(blob, 1, sizeof blob, file) == sizeof blob;
    if (file && fclose(file) != 0) written = 0;
    if (!written) fprintf(stderr, "%s: cannot write the weights\\n", path);
    return written;
}}

int main(int argc, char **argv)
{{
    static float x[MAX_BATCH * FEATURES];
    static {label_c} labels[MAX_BATCH];
    static float scores[PREDICT_BATCH * CLASSES];
    dataset train, test;
    int epochs, epoch;
{step_decl}    if (argc < 3 || argc > 6) {{
        fprintf(stderr, "usage: %s TRAIN.bin TEST.bin [EPOCHS [SEED [WEIGHTS]]]\\n", argv[0]);
        return 2;
    }}
    if (!open_dataset(&train, argv[1]) || !open_dataset(&test, argv[2])) {{
        return 1;
    }}
    epochs = argc > 3 ? atoi(argv[3]) : 10;
    {prefix}init(argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0u);
    printf("training on %lu samples, testing on %lu; batch %d, arena %d bytes, "
           "parameters and state %d bytes\\n",
           train.count, test.count, BATCH, {prefix.upper()}ARENA_BYTES,
           {prefix.upper()}PERSISTENT_BYTES);
    for (epoch = 1; epoch <= epochs; ++epoch) {{
        double total = 0.0;
        unsigned long steps = 0, correct = 0, seen = 0;
        rewind_dataset(&train);
        while (read_batch(&train, x, labels, BATCH)) {{
            total += {prefix}train_step(x, labels{step_arg});
{step_next}            ++steps;
        }}
        rewind_dataset(&test);
        while (read_batch(&test, x, labels, PREDICT_BATCH)) {{
            int i, c;
            {prefix}predict(x, scores);
            for (i = 0; i < PREDICT_BATCH; ++i) {{
                int best = 0;
                for (c = 1; c < CLASSES; ++c) {{
                    if (scores[i * CLASSES + c] > scores[i * CLASSES + best]) best = c;
                }}
                correct += best == (int)labels[i];
                ++seen;
            }}
        }}
        printf("epoch %2d  loss %.4f  test accuracy %.2f%%\\n", epoch,
               steps ? total / (double)steps : 0.0,
               seen ? 100.0 * (double)correct / (double)seen : 0.0);
    }}
    fclose(train.file);
    fclose(test.file);
    return argc > 5 && !write_weights(argv[5]);
}}
"""


def _comment(text: str) -> str:
    return "\n".join(f" * {line}" for line in text.splitlines())
