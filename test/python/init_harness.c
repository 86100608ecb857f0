/* Drives adir_init.h for test_initializers.py: reads commands from stdin, appends each
 * command's values in native byte order to the file named by argv[1].
 *
 *   u64 SEED START COUNT            adir_prng_u64(SEED, START + j), j < COUNT (uint64)
 *   uniform SEED START COUNT        adir_prng_uniform (float)
 *   normal SEED START COUNT         adir_prng_normal (float)
 *   ln COUNT X...                   adir_prng_ln (double; X are double bit patterns)
 *   sqrt COUNT X...                 adir_prng_sqrt (double)
 *   cos_turn COUNT K...             adir_prng_cos_turn (double)
 *   zeros N | fill N V | uniform_init N LOW HIGH SEED | normal_init N MEAN STD SEED
 *   kaiming_uniform N BOUND SEED | xavier_uniform N BOUND SEED      the fills (float)
 *
 * Every number is hexadecimal; float and double arguments are their bit patterns, so nothing
 * is lost in text.
 */
#include "adir_init.h"

#include <stdio.h>
#include <stdlib.h>

static FILE *out_file;

static uint64_t read_u64(void)
{
    unsigned long long value;
    if (scanf("%llx", &value) != 1) {
        fprintf(stderr, "init_harness: expected a hexadecimal number\n");
        exit(2);
    }
    return (uint64_t)value;
}

static float read_float(void)
{
    uint32_t bits = (uint32_t)read_u64();
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static double read_double(void)
{
    uint64_t bits = read_u64();
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void write_values(const void *data, size_t size, size_t count)
{
    if (fwrite(data, size, count, out_file) != count) {
        fprintf(stderr, "init_harness: cannot write the output\n");
        exit(2);
    }
}

static float *allocate_floats(size_t n)
{
    float *values = malloc((n ? n : 1) * sizeof *values);
    if (values == NULL) {
        fprintf(stderr, "init_harness: out of memory\n");
        exit(2);
    }
    return values;
}

static void draws(const char *kind)
{
    uint64_t seed = read_u64();
    uint64_t start = read_u64();
    uint64_t count = read_u64();
    uint64_t j;
    for (j = 0; j < count; ++j) {
        if (strcmp(kind, "u64") == 0) {
            uint64_t value = adir_prng_u64(seed, start + j);
            write_values(&value, sizeof value, 1);
        } else {
            float value = strcmp(kind, "uniform") == 0 ? adir_prng_uniform(seed, start + j)
                                                       : adir_prng_normal(seed, start + j);
            write_values(&value, sizeof value, 1);
        }
    }
}

static void elementary(const char *kind)
{
    uint64_t count = read_u64();
    uint64_t j;
    for (j = 0; j < count; ++j) {
        double value;
        if (strcmp(kind, "cos_turn") == 0) {
            value = adir_prng_cos_turn(read_u64());
        } else if (strcmp(kind, "ln") == 0) {
            value = adir_prng_ln(read_double());
        } else {
            value = adir_prng_sqrt(read_double());
        }
        write_values(&value, sizeof value, 1);
    }
}

static void fill(const char *kind)
{
    size_t n = (size_t)read_u64();
    float *values = allocate_floats(n);
    if (strcmp(kind, "zeros") == 0) {
        adir_init_zeros(values, n);
    } else if (strcmp(kind, "fill") == 0) {
        adir_init_fill(values, n, read_float());
    } else if (strcmp(kind, "uniform_init") == 0) {
        float low = read_float();
        float high = read_float();
        adir_init_uniform(values, n, low, high, read_u64());
    } else if (strcmp(kind, "normal_init") == 0) {
        float mean = read_float();
        float std = read_float();
        adir_init_normal(values, n, mean, std, read_u64());
    } else if (strcmp(kind, "kaiming_uniform") == 0) {
        float bound = read_float();
        adir_init_kaiming_uniform(values, n, bound, read_u64());
    } else {
        float bound = read_float();
        adir_init_xavier_uniform(values, n, bound, read_u64());
    }
    write_values(values, sizeof *values, n);
    free(values);
}

int main(int argc, char **argv)
{
    char kind[32];
    if (argc != 2 || (out_file = fopen(argv[1], "wb")) == NULL) {
        fprintf(stderr, "usage: init_harness OUTPUT < COMMANDS\n");
        return 2;
    }
    while (scanf("%31s", kind) == 1) {
        if (strcmp(kind, "u64") == 0 || strcmp(kind, "uniform") == 0
            || strcmp(kind, "normal") == 0) {
            draws(kind);
        } else if (strcmp(kind, "ln") == 0 || strcmp(kind, "sqrt") == 0
                   || strcmp(kind, "cos_turn") == 0) {
            elementary(kind);
        } else if (strcmp(kind, "zeros") == 0 || strcmp(kind, "fill") == 0
                   || strcmp(kind, "uniform_init") == 0 || strcmp(kind, "normal_init") == 0
                   || strcmp(kind, "kaiming_uniform") == 0
                   || strcmp(kind, "xavier_uniform") == 0) {
            fill(kind);
        } else {
            fprintf(stderr, "init_harness: unknown command '%s'\n", kind);
            return 2;
        }
    }
    return fclose(out_file) == 0 ? 0 : 2;
}
