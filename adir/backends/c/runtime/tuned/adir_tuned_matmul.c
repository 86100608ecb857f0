/* adir_tuned_matmul.c: adir_tuned_matmul (reference: adir_matmul in
 * reference/adir_matmul.c).
 *
 * Register-blocked loops in portable C99 that gcc and clang vectorize (at -O3, and with
 * -march=native for the widest vectors). No transpose is materialised: each layout gets the loop
 * nest whose innermost loop runs over contiguous memory.
 *
 * - Plain b, c = op_a(a) b: outer products. An MR x NR tile of c stays in registers while p runs
 *   (adir_gemm_tile, on the GEMM micro-kernel that the fused updates share); each step
 *   multiplies MR elements of column p of op_a(a) by a contiguous run of NR elements of row p
 *   of b (NR spans one or two vectors). k is cut into blocks of KC, so that the KC x NR panel of
 *   b stays in the L1 cache while every tile of c below it reuses it. Rows left below the last
 *   tile (all of them for a batch of one) stream over b row by row.
 * - transpose_b alone, c = a b^T (a linear layer's forward pass): dot products of rows of a
 *   with rows of b, both contiguous, ROWS x COLS of them at once. Each sum is split into LANES
 *   interleaved partial sums (one vector) added up at the end: a compiler may not reorder a
 *   float sum by itself, so one running sum would not vectorize.
 * - Both transposed: c^T = b a is the plain-b case with a and b swapped, stored transposed.
 *
 * The sums run in another order than the reference's (blocked over k, interleaved), as in any
 * BLAS; with a fast fused multiply-add each step rounds once. Tile sizes come from the target's
 * settings header (targets/). */
#include "adir_tuned.h"


/* One full MR x NR tile of the product by the GEMM micro-kernel (adir_gemm_sums, adir_tuned.h):
 * c[i * c_row + j * c_col] (+)= the sum over p < k of a[i * a_row + p * a_col] *
 * b[p * b_row + j], added to c when accumulate, else stored. */
ADIR_NOINLINE static void adir_gemm_tile(const float *restrict a, size_t a_row, size_t a_col,
                                         const float *restrict b, size_t b_row,
                                         float *restrict c, size_t c_row, size_t c_col,
                                         int32_t k, int accumulate)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    adir_gemm_sums(a, a_row, a_col, b, b_row, k, acc);
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            float *out = c + (size_t)i * c_row + (size_t)j * c_col;
            *out = accumulate ? *out + acc[i][j] : acc[i][j];
        }
    }
}

/* The same for a tile at the right edge: MR rows, cols < NR. */
ADIR_NOINLINE static void adir_outer_edge(const float *restrict a, size_t a_row, size_t a_col,
                                             const float *restrict b, size_t b_row,
                                             float *restrict c, size_t c_row, size_t c_col,
                                             int32_t cols, int32_t k, int accumulate)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j, p;
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < cols; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *restrict b_p = b + (size_t)p * b_row;
        for (i = 0; i < ADIR_GEMM_MR; ++i) {
            const float x = a[(size_t)i * a_row + (size_t)p * a_col];
            for (j = 0; j < cols; ++j) {
                acc[i][j] = ADIR_FMA(x, b_p[j], acc[i][j]);
            }
        }
    }
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < cols; ++j) {
            float *out = c + (size_t)i * c_row + (size_t)j * c_col;
            *out = accumulate ? *out + acc[i][j] : acc[i][j];
        }
    }
}

/* One row i of the product, whole (what is left of m below the last full tile, or m = 1, a
 * batch of one): c[j * c_col] = the sum over p of a[p * a_col] * b[p * b_row + j], j < n,
 * streaming over rows of b as they lie in memory, with c's row as the accumulator. */
static void adir_outer_stream(const float *restrict a, size_t a_col, const float *restrict b,
                              size_t b_row, float *restrict c, size_t c_col, int32_t n,
                              int32_t k)
{
    int32_t j, p;
    for (j = 0; j < n; ++j) {
        c[(size_t)j * c_col] = 0.0f;
    }
    for (p = 0; p < k; ++p) {
        const float x = a[(size_t)p * a_col];
        const float *restrict b_p = b + (size_t)p * b_row;
        if (c_col == 1u) {
            for (j = 0; j < n; ++j) {
                c[j] = ADIR_FMA(x, b_p[j], c[j]);
            }
        } else {
            for (j = 0; j < n; ++j) {
                c[(size_t)j * c_col] = ADIR_FMA(x, b_p[j], c[(size_t)j * c_col]);
            }
        }
    }
}

/* A scalar core's settings header (the Cortex-M4F's) sets ADIR_STREAM_COLS: a row left below
 * the last tile (all of a batch of one) is then computed ADIR_STREAM_COLS columns at a time,
 * their sums in registers while p runs (one load of a and one pointer step a row of b, where
 * the stream loads and stores c for every multiply-add). Each sum adds over p in the same
 * order as the stream's, so the results are the same. Vector targets keep the stream, whose
 * inner loop vectorizes. */
#ifndef ADIR_STREAM_COLS
#define ADIR_STREAM_COLS 0
#endif

#if ADIR_STREAM_COLS > 0
/* c[j * c_col] = the sum over p of a[p * a_col] * b[p * b_row + j], j < ADIR_STREAM_COLS. */
static void adir_outer_columns(const float *restrict a, size_t a_col, const float *restrict b,
                               size_t b_row, float *restrict c, size_t c_col, int32_t k)
{
    float acc[ADIR_STREAM_COLS];
    int32_t j, p;
    ADIR_UNROLL
    for (j = 0; j < ADIR_STREAM_COLS; ++j) {
        acc[j] = 0.0f;
    }
    for (p = 0; p < k; ++p) {
        const float x = *a;
        ADIR_UNROLL
        for (j = 0; j < ADIR_STREAM_COLS; ++j) {
            acc[j] = ADIR_FMA(x, b[j], acc[j]);
        }
        a += a_col, b += b_row;
    }
    ADIR_UNROLL
    for (j = 0; j < ADIR_STREAM_COLS; ++j) {
        c[(size_t)j * c_col] = acc[j];
    }
}
#endif

/* One row of the product: ADIR_STREAM_COLS columns at a time where the target sets it, the
 * rest (or all) by the stream. */
static void adir_outer_row(const float *restrict a, size_t a_col, const float *restrict b,
                           size_t b_row, float *restrict c, size_t c_col, int32_t n, int32_t k)
{
    int32_t j = 0;
#if ADIR_STREAM_COLS > 0
    for (; j + ADIR_STREAM_COLS <= n; j += ADIR_STREAM_COLS) {
        adir_outer_columns(a, a_col, b + j, b_row, c + (size_t)j * c_col, c_col, k);
    }
#endif
    if (j < n) {
        adir_outer_stream(a, a_col, b + j, b_row, c + (size_t)j * c_col, c_col, n - j, k);
    }
}

/* The m x n product of the outer-product form (see adir_gemm_tile for the strides). */
static void adir_outer_product(const float *a, size_t a_row, size_t a_col, const float *b,
                               size_t b_row, float *c, size_t c_row, size_t c_col, int32_t m,
                               int32_t n, int32_t k)
{
    int32_t i, j, p;
    if (k == 0) {
        for (i = 0; i < m; ++i) {
            for (j = 0; j < n; ++j) {
                c[(size_t)i * c_row + (size_t)j * c_col] = 0.0f;
            }
        }
        return;
    }
    for (j = 0; j < n; j += ADIR_GEMM_NR) {
        const int32_t cols = n - j < ADIR_GEMM_NR ? n - j : ADIR_GEMM_NR;
        for (p = 0; p < k; p += ADIR_GEMM_KC) {
            const int32_t depth = k - p < ADIR_GEMM_KC ? k - p : ADIR_GEMM_KC;
            for (i = 0; i + ADIR_GEMM_MR <= m; i += ADIR_GEMM_MR) {
                const float *a_tile = a + (size_t)i * a_row + (size_t)p * a_col;
                const float *b_tile = b + (size_t)p * b_row + (size_t)j;
                float *c_tile = c + (size_t)i * c_row + (size_t)j * c_col;
                if (cols == ADIR_GEMM_NR) {
                    adir_gemm_tile(a_tile, a_row, a_col, b_tile, b_row, c_tile, c_row, c_col,
                                    depth, p > 0);
                } else {
                    adir_outer_edge(a_tile, a_row, a_col, b_tile, b_row, c_tile, c_row, c_col,
                                    cols, depth, p > 0);
                }
            }
        }
    }
    for (i = m - m % ADIR_GEMM_MR; i < m; ++i) {
        adir_outer_row(a + (size_t)i * a_row, a_col, b, b_row, c + (size_t)i * c_row, c_col, n,
                       k);
    }
}

/* The dot tile's lanes innermost under gcc: the targets that set ADIR_LANES_INNERMOST (scalar
 * cores, whose figures were measured with it) unless their header says otherwise. */
#ifndef ADIR_DOT_LANES_INNERMOST
#define ADIR_DOT_LANES_INNERMOST ADIR_LANES_INNERMOST
#endif
#define ADIR_GCC_DOT_LANES_INNERMOST (ADIR_DOT_LANES_INNERMOST && ADIR_GCC)

/* One tile of the dot-product form: c[i * n + j] = the dot product of rows i of a and j of b
 * (k long, rows a_row and b_row apart), for i < rows and j < cols (rows <= ROWS, cols <= COLS).
 * A tile at the bottom or right edge computes the full tile on repeated rows (the last one) and
 * stores only its own: the loops keep their constant bounds, and the accumulators stay in
 * registers. */
ADIR_NOINLINE static void adir_dot_tile(const float *restrict a, size_t a_row,
                                       const float *restrict b, size_t b_row, float *restrict c,
                                       size_t n, int32_t rows, int32_t cols, int32_t k)
{
    float acc[ADIR_DOT_ROWS][ADIR_DOT_COLS][ADIR_DOT_LANES];
    const float *a_i[ADIR_DOT_ROWS];
    const float *b_j[ADIR_DOT_COLS];
    int32_t i, j, l, p, q;
    for (i = 0; i < ADIR_DOT_ROWS; ++i) {
        a_i[i] = a + (size_t)(i < rows ? i : rows - 1) * a_row;
        for (j = 0; j < ADIR_DOT_COLS; ++j) {
            for (l = 0; l < ADIR_DOT_LANES; ++l) {
                acc[i][j][l] = 0.0f;
            }
        }
    }
    for (j = 0; j < ADIR_DOT_COLS; ++j) {
        b_j[j] = b + (size_t)(j < cols ? j : cols - 1) * b_row;
    }
    for (p = 0; p + ADIR_DOT_LANES <= k; p += ADIR_DOT_LANES) {
#if ADIR_GCC && !ADIR_DOT_LANES_INNERMOST
        /* gcc: every loop unrolled whole by pragma, at -O2 as at -O3, before the vectorizer
         * runs; each sum's LANES lanes (one vector) then load from a pointer and offsets
         * 0..LANES-1, which gcc's basic-block vectorizer turns into one vector multiply-add. */
        ADIR_TILE_UNROLL
        for (i = 0; i < ADIR_DOT_ROWS; ++i) {
            const float *restrict x = a_i[i] + p;
            ADIR_TILE_UNROLL
            for (j = 0; j < ADIR_DOT_COLS; ++j) {
                const float *restrict y = b_j[j] + p;
                ADIR_TILE_UNROLL
                for (l = 0; l < ADIR_DOT_LANES; ++l) {
                    acc[i][j][l] = ADIR_FMA(x[l], y[l], acc[i][j][l]);
                }
            }
        }
#elif !ADIR_GCC_DOT_LANES_INNERMOST
        /* Lanes outermost: unrolled whole (clang), the tile stays in registers. */
        for (l = 0; l < ADIR_DOT_LANES; ++l) {
            for (i = 0; i < ADIR_DOT_ROWS; ++i) {
                const float x = a_i[i][p + l];
                for (j = 0; j < ADIR_DOT_COLS; ++j) {
                    acc[i][j][l] = ADIR_FMA(x, b_j[j][p + l], acc[i][j][l]);
                }
            }
        }
#else
        /* Lanes innermost: a loop that gcc's cheapest vectorizer (-O2, no AVX) takes as it is. */
        for (i = 0; i < ADIR_DOT_ROWS; ++i) {
            for (j = 0; j < ADIR_DOT_COLS; ++j) {
                for (l = 0; l < ADIR_DOT_LANES; ++l) {
                    acc[i][j][l] = ADIR_FMA(a_i[i][p + l], b_j[j][p + l], acc[i][j][l]);
                }
            }
        }
#endif
    }
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) {
            float sum = 0.0f;
            for (l = 0; l < ADIR_DOT_LANES; ++l) {
                sum += acc[i][j][l];
            }
            for (q = p; q < k; ++q) {
                sum = ADIR_FMA(a_i[i][q], b_j[j][q], sum);
            }
            c[(size_t)i * n + (size_t)j] = sum;
        }
    }
}

/* The same for one row of a (what is left of m below the last full tile, or m = 1, a batch
 * of one): against COLS rows of b at a time. A target whose header sets ADIR_DOT_ROW_UNROLL_TILE
 * (a scalar core) has gcc unroll the tile whole, so that its sums stay in registers; so does
 * every target whose dot tile is unrolled whole (gcc -O2 would leave it rolled, its sums in
 * memory: a batch of one's 784 x 32 forward product with -O2 -march=native ran 4 times slower
 * than at -O3). */
#if ((defined(ADIR_DOT_ROW_UNROLL_TILE) && ADIR_DOT_ROW_UNROLL_TILE) ||                         \
     !ADIR_DOT_LANES_INNERMOST) &&                                                              \
    ADIR_GCC
#define ADIR_DOT_ROW_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_DOT_ROW_UNROLL
#endif
/* Steps of LANES elements per turn of the loop over k: more steps, fewer pointer increments
 * and loop tests for each multiply-add (a scalar core's loads take constant offsets). Each
 * partial sum still adds its elements in the order of k, so the result is the same. */
#ifndef ADIR_DOT_ROW_STEPS
#define ADIR_DOT_ROW_STEPS 1
#endif

/* acc[j][l] += a[p + l] * b_j[j][p + l] for each lane l of one step of LANES elements at p. */
static ADIR_INLINE void adir_dot_row_step(const float *restrict a, const float *const *b_j,
                                          int32_t p, float acc[ADIR_DOT_COLS][ADIR_DOT_LANES])
{
    int32_t j, l;
#if ADIR_GCC && !ADIR_DOT_LANES_INNERMOST
    /* As in adir_dot_tile: each sum's lanes from a pointer and offsets, one vector. */
    const float *restrict x = a + p;
    ADIR_DOT_ROW_UNROLL
    for (j = 0; j < ADIR_DOT_COLS; ++j) {
        const float *restrict y = b_j[j] + p;
        ADIR_DOT_ROW_UNROLL
        for (l = 0; l < ADIR_DOT_LANES; ++l) {
            acc[j][l] = ADIR_FMA(x[l], y[l], acc[j][l]);
        }
    }
#else
    ADIR_DOT_ROW_UNROLL
    for (l = 0; l < ADIR_DOT_LANES; ++l) {
        const float x = a[p + l];
        ADIR_DOT_ROW_UNROLL
        for (j = 0; j < ADIR_DOT_COLS; ++j) {
            acc[j][l] = ADIR_FMA(x, b_j[j][p + l], acc[j][l]);
        }
    }
#endif
}

static void adir_dot_row(const float *restrict a, const float *restrict b, size_t b_row,
                         float *restrict c, int32_t cols, int32_t k)
{
    float acc[ADIR_DOT_COLS][ADIR_DOT_LANES];
    const float *b_j[ADIR_DOT_COLS];
    int32_t j, l, p = 0, q, s;
    for (j = 0; j < ADIR_DOT_COLS; ++j) {
        b_j[j] = b + (size_t)(j < cols ? j : cols - 1) * b_row;
        for (l = 0; l < ADIR_DOT_LANES; ++l) {
            acc[j][l] = 0.0f;
        }
    }
    if (ADIR_DOT_ROW_STEPS > 1) {
        for (; p + ADIR_DOT_ROW_STEPS * ADIR_DOT_LANES <= k;
             p += ADIR_DOT_ROW_STEPS * ADIR_DOT_LANES) {
            ADIR_DOT_ROW_UNROLL
            for (s = 0; s < ADIR_DOT_ROW_STEPS; ++s) {
                adir_dot_row_step(a, b_j, p + s * ADIR_DOT_LANES, acc);
            }
        }
    }
    for (; p + ADIR_DOT_LANES <= k; p += ADIR_DOT_LANES) {
        adir_dot_row_step(a, b_j, p, acc);
    }
    for (j = 0; j < cols; ++j) {
        float sum = 0.0f;
        for (l = 0; l < ADIR_DOT_LANES; ++l) {
            sum += acc[j][l];
        }
        for (q = p; q < k; ++q) {
            sum = ADIR_FMA(a[q], b_j[j][q], sum);
        }
        c[j] = sum;
    }
}

/* c = a b^T: a is m x k, b is n x k, c is m x n. Tiles of ROWS rows of a, then single rows. */
static void adir_dot_product(const float *a, const float *b, float *c, int32_t m, int32_t n,
                             int32_t k)
{
    const size_t sn = (size_t)n, sk = (size_t)k;
    int32_t i = 0, j;
    for (; i + ADIR_DOT_ROWS <= m; i += ADIR_DOT_ROWS) {
        for (j = 0; j < n; j += ADIR_DOT_COLS) {
            const int32_t cols = n - j < ADIR_DOT_COLS ? n - j : ADIR_DOT_COLS;
            adir_dot_tile(a + (size_t)i * sk, sk, b + (size_t)j * sk, sk,
                          c + (size_t)i * sn + (size_t)j, sn, ADIR_DOT_ROWS, cols, k);
        }
    }
    for (; i < m; ++i) {
        for (j = 0; j < n; j += ADIR_DOT_COLS) {
            const int32_t cols = n - j < ADIR_DOT_COLS ? n - j : ADIR_DOT_COLS;
            adir_dot_row(a + (size_t)i * sk, b + (size_t)j * sk, sk, c + (size_t)i * sn + (size_t)j,
                         cols, k);
        }
    }
}

/* One m x n product (see the header for the layouts). */
static void adir_matmul_one(const float *a, const float *b, float *c, int32_t m, int32_t n,
                            int32_t k, int transpose_a, int transpose_b)
{
    const size_t sm = (size_t)m, sn = (size_t)n, sk = (size_t)k;
    if (!transpose_b) {
        /* op_a(a)[i][p] is a[i * k + p], or a[p * m + i] when transposed. */
        adir_outer_product(a, transpose_a ? 1u : sk, transpose_a ? sm : 1u, b, sn, c, sn, 1u,
                           m, n, k);
    } else if (!transpose_a) {
        adir_dot_product(a, b, c, m, n, k);
    } else {
        /* c^T = b a: b is n x k, a is k x m; element (j, i) goes to c[i * n + j]. */
        adir_outer_product(b, sk, 1u, a, sm, c, 1u, sn, n, m, k);
    }
}

void adir_tuned_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                       int32_t n, int32_t k, int transpose_a, int transpose_b, int shared_b)
{
    const size_t a_size = (size_t)m * (size_t)k;
    const size_t b_size = shared_b ? 0u : (size_t)k * (size_t)n;
    const size_t c_size = (size_t)m * (size_t)n;
    int32_t i;
    for (i = 0; i < batch; ++i) {
        adir_matmul_one(a + i * a_size, b + i * b_size, c + i * c_size, m, n, k, transpose_a,
                        transpose_b);
    }
}
