/* adir_activations.c: the reference kernels of the activations family (declared in
 * adir_activations.h).
 *
 * Every elementwise loop reads element i of its inputs into locals before it writes element i
 * of its output, so an output may be one of the inputs. The constants are PyTorch's, rounded
 * to float as its float32 kernels (and the interpreter) round them.
 */
#include <math.h>
#include <string.h>

#include "adir_chunked.h"
#include "adir_kernels.h"

static const float sqrt1_2 = 0.707106769f;          /* 1 / sqrt(2) */
static const float normal_pdf_scale = 0.398942292f; /* 1 / sqrt(2 pi) */
static const float gelu_tanh_beta = 0.797884583f;   /* sqrt(2 / pi) */
static const float gelu_tanh_kappa = 0.0447149985f;

/* The overflow-free sigmoid: exp only ever sees -|x|. */
static float sigmoid_of(float x)
{
    const float e = expf(-fabsf(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

/* The selects of relu, clamp and their gradients run in ADIR_CHUNKED loops: at -O2 a plain
 * loop's select is a branch, mispredicted about half the time (adir_chunked.h). leaky_relu's
 * is not: gcc does not multiply an element whose product the select may drop (the multiply
 * could raise a floating-point exception the plain loop does not), so it stays a branch. */
static float relu_of(float v) { return v < 0.0f ? 0.0f : v; }

void adir_relu(const float *x, float *y, size_t n)
{
    size_t i;
    ADIR_CHUNKED(float, n, y, i, relu_of(x[i]));
}

void adir_leaky_relu(const float *x, float *y, size_t n, float alpha)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : v * alpha;
    }
}

void adir_sigmoid(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = sigmoid_of(x[i]);
    }
}

void adir_tanh(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = tanhf(x[i]);
    }
}

void adir_softplus(const float *x, float *y, size_t n, float beta, float threshold)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        const float scaled = v * beta;
        y[i] = scaled > threshold ? v : log1pf(expf(scaled)) / beta;
    }
}

void adir_gelu(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v * 0.5f * (1.0f + erff(v * sqrt1_2));
    }
}

void adir_gelu_tanh(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        const float inner = gelu_tanh_beta * (v + gelu_tanh_kappa * (v * v * v));
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

static float clamp_of(float v, float lo, float hi)
{
    const float t = v < lo ? lo : v;
    return t > hi ? hi : t;
}

void adir_clamp(const float *x, float *y, size_t n, float lo, float hi)
{
    size_t i;
    ADIR_CHUNKED(float, n, y, i, clamp_of(x[i], lo, hi));
}

void adir_hardswish(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v * clamp_of(v + 3.0f, 0.0f, 6.0f) / 6.0f;
    }
}

void adir_hardsigmoid(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = clamp_of(x[i] + 3.0f, 0.0f, 6.0f) / 6.0f;
    }
}

/* The max of one slice (x[0], x[stride], ...); -inf for an empty slice. A nan need not win:
 * x - max is nan at a nan entry, so the slice's sum, and with it every output, is nan. */
static float slice_max(const float *x, int32_t size, int32_t stride)
{
    float m = -INFINITY;
    int32_t j;
    for (j = 0; j < size; ++j) {
        const float v = x[(size_t)j * (size_t)stride];
        if (v > m) {
            m = v;
        }
    }
    return m;
}

void adir_softmax(const float *x, float *y, int32_t outer, int32_t axis_size, int32_t inner)
{
    int32_t o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            const size_t base = (size_t)o * (size_t)axis_size * (size_t)inner + (size_t)i;
            const float m = slice_max(x + base, axis_size, inner);
            float sum = 0.0f;
            for (j = 0; j < axis_size; ++j) {
                const size_t at = base + (size_t)j * (size_t)inner;
                y[at] = expf(x[at] - m);
                sum += y[at];
            }
            for (j = 0; j < axis_size; ++j) {
                y[base + (size_t)j * (size_t)inner] /= sum;
            }
        }
    }
}

void adir_log_softmax(const float *x, float *y, int32_t outer, int32_t axis_size,
                      int32_t inner)
{
    int32_t o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            const size_t base = (size_t)o * (size_t)axis_size * (size_t)inner + (size_t)i;
            const float m = slice_max(x + base, axis_size, inner);
            float sum = 0.0f, log_sum;
            for (j = 0; j < axis_size; ++j) {
                sum += expf(x[base + (size_t)j * (size_t)inner] - m);
            }
            log_sum = logf(sum);
            for (j = 0; j < axis_size; ++j) {
                const size_t at = base + (size_t)j * (size_t)inner;
                y[at] = (x[at] - m) - log_sum;
            }
        }
    }
}

static float relu_grad_of(float out, float g) { return out <= 0.0f ? 0.0f : g; }

void adir_relu_grad(const float *y, const float *dy, float *dx, size_t n)
{
    size_t i;
    ADIR_CHUNKED(float, n, dx, i, relu_grad_of(y[i], dy[i]));
}

void adir_leaky_relu_grad(const float *x, const float *dy, float *dx, size_t n, float alpha)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i], g = dy[i];
        dx[i] = v > 0.0f ? g : g * alpha;
    }
}

void adir_sigmoid_grad(const float *y, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float out = y[i], g = dy[i];
        dx[i] = g * (1.0f - out) * out;
    }
}

/* (1 - y) * (1 + y) rather than PyTorch's 1 - y * y, which cancels near |y| = 1. */
void adir_tanh_grad(const float *y, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float out = y[i], g = dy[i];
        dx[i] = g * ((1.0f - out) * (1.0f + out));
    }
}

void adir_softplus_grad(const float *x, const float *dy, float *dx, size_t n, float beta,
                        float threshold)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float scaled = x[i] * beta, g = dy[i];
        dx[i] = scaled > threshold ? g : g * sigmoid_of(scaled);
    }
}

void adir_gelu_grad(const float *x, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i], g = dy[i];
        const float cdf = 0.5f * (1.0f + erff(v * sqrt1_2));
        const float pdf = normal_pdf_scale * expf(v * v * -0.5f);
        dx[i] = g * (cdf + v * pdf);
    }
}

void adir_gelu_tanh_grad(const float *x, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i], g = dy[i];
        const float v_sq = v * v;
        const float t = tanhf(gelu_tanh_beta * (v + gelu_tanh_kappa * (v_sq * v)));
        const float left = 0.5f * (1.0f + t);
        const float inner = gelu_tanh_beta * (1.0f + 3.0f * gelu_tanh_kappa * v_sq);
        const float right = 0.5f * v * (1.0f - t * t) * inner;
        dx[i] = g * (left + right);
    }
}

void adir_softmax_grad(const float *y, const float *dy, float *dx, int32_t outer,
                       int32_t axis_size, int32_t inner)
{
    int32_t o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            const size_t base = (size_t)o * (size_t)axis_size * (size_t)inner + (size_t)i;
            float dot = 0.0f;
            for (j = 0; j < axis_size; ++j) {
                const size_t at = base + (size_t)j * (size_t)inner;
                dot += dy[at] * y[at];
            }
            for (j = 0; j < axis_size; ++j) {
                const size_t at = base + (size_t)j * (size_t)inner;
                dx[at] = y[at] * (dy[at] - dot);
            }
        }
    }
}

void adir_log_softmax_grad(const float *y, const float *dy, float *dx, int32_t outer,
                           int32_t axis_size, int32_t inner)
{
    int32_t o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            const size_t base = (size_t)o * (size_t)axis_size * (size_t)inner + (size_t)i;
            float sum = 0.0f;
            for (j = 0; j < axis_size; ++j) {
                sum += dy[base + (size_t)j * (size_t)inner];
            }
            for (j = 0; j < axis_size; ++j) {
                const size_t at = base + (size_t)j * (size_t)inner;
                dx[at] = dy[at] - expf(y[at]) * sum;
            }
        }
    }
}

/* Both bounds' compares with `&`, not `&&`, whose second compare is a branch of its own. */
static float clamp_grad_of(float v, float g, float lo, float hi)
{
    return ((v > lo) & (v < hi)) ? g : 0.0f;
}

void adir_clamp_grad(const float *s, const float *dy, float *dx, size_t n, float lo, float hi)
{
    size_t i;
    ADIR_CHUNKED(float, n, dx, i, clamp_grad_of(s[i], dy[i], lo, hi));
}

static float clamp_inclusive_grad_of(float v, float g, float lo, float hi)
{
    return ((v >= lo) & (v <= hi)) ? g : 0.0f;
}

void adir_clamp_inclusive_grad(const float *x, const float *dy, float *dx, size_t n, float lo,
                               float hi)
{
    size_t i;
    ADIR_CHUNKED(float, n, dx, i, clamp_inclusive_grad_of(x[i], dy[i], lo, hi));
}

/* The masks: each word is built in a uint32_t and stored whole, so no bit of it depends on
   what the buffer held before; the C stores the bits of an int32_t word as uint32_t's. */
#define ADIR_MASK_LOOP(predicate)                                                  \
    do {                                                                           \
        size_t i, word;                                                            \
        for (word = 0; word * 32u < n; ++word) {                                   \
            uint32_t bits = 0u;                                                    \
            const size_t end = n - word * 32u < 32u ? n - word * 32u : 32u;        \
            for (i = 0; i < end; ++i) {                                            \
                const float v = s[word * 32u + i];                                 \
                bits |= (uint32_t)(predicate) << i;                                \
            }                                                                      \
            memcpy(&mask[word], &bits, sizeof bits);                               \
        }                                                                          \
    } while (0)

void adir_relu_mask(const float *s, int32_t *mask, size_t n)
{
    ADIR_MASK_LOOP(!(v <= 0.0f));
}

void adir_clamp_mask(const float *s, int32_t *mask, size_t n, float lo, float hi)
{
    ADIR_MASK_LOOP(v > lo && v < hi);
}

void adir_clamp_inclusive_mask(const float *s, int32_t *mask, size_t n, float lo, float hi)
{
    ADIR_MASK_LOOP(v >= lo && v <= hi);
}

/* dx[i] = bit i ? dy[i] : 0.0f, as dy[i]'s bits and'ed with all ones or none (0.0f is all
 * zero bits): the select at -O2 (and -O3) was a branch, taken at random. */
void adir_mask_grad(const int32_t *mask, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        uint32_t bits, g;
        memcpy(&bits, &mask[i / 32u], sizeof bits);
        memcpy(&g, &dy[i], sizeof g);
        g &= 0u - ((bits >> (i % 32u)) & 1u);
        memcpy(&dx[i], &g, sizeof g);
    }
}

void adir_hardswish_grad(const float *x, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i], g = dy[i];
        dx[i] = v <= -3.0f ? 0.0f : (v < 3.0f ? g * (v / 3.0f + 0.5f) : g);
    }
}

void adir_hardsigmoid_grad(const float *x, const float *dy, float *dx, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i], g = dy[i];
        dx[i] = (v > -3.0f && v < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
    }
}
