/*
 * Hand-written C versions of the programs of onnx_shapes.py: the loops of each Krnl
 * program, in its order, written as plain C and compiled by gcc -O3 -march=native
 * (onnx_shapes_c.py). The baseline the Numba kernels are measured against.
 *
 * Each function takes the program's inputs (C-contiguous float32, or int64 for
 * gather's indices) in the Krnl function's order, then its result (float32, allocated
 * by the caller), then the program's sizes as int64 in the order of onnx_shapes.py's
 * Program.big. Vector loops of the Krnl programs (vector<8xf32>, vector<16xf32>) are
 * written as a loop over the lanes inside the tile loop, which gcc vectorizes; a
 * vector accumulator is an array of lanes. maxnumf is fmaxf (both return the number
 * when one operand is NaN).
 *
 * The OpenMP build (-fopenmp, onnx_shapes_c.py's parallel library) runs the loops under
 * `#pragma omp parallel for` in parallel: the rows of softmax and layernorm, the output
 * channels of conv, the row tiles of matmul. The single-thread build ignores them.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef int64_t idx;

void onnx_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

int onnx_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* ------------------------------------------------------------ SIMD elementwise */

void add(const float *restrict a, const float *restrict b, float *restrict out, idx N)
{
    idx main = N - N % 8;
    for (idx i = 0; i < main; i += 8)
        for (idx l = 0; l < 8; l++)
            out[i + l] = a[i + l] + b[i + l];
    for (idx j = main; j < N; j++)
        out[j] = a[j] + b[j];
}

void relu(const float *restrict a, float *restrict out, idx N)
{
    idx main = N - N % 16;
    for (idx i = 0; i < main; i += 16)
        for (idx l = 0; l < 16; l++)
            out[i + l] = fmaxf(a[i + l], 0.0f);
    for (idx j = main; j < N; j++)
        out[j] = fmaxf(a[j], 0.0f);
}

void tanh_(const float *restrict a, float *restrict out, idx N)
{
    idx main = N - N % 8;
    for (idx i = 0; i < main; i += 8)
        for (idx l = 0; l < 8; l++)
            out[i + l] = tanhf(a[i + l]);
    for (idx j = main; j < N; j++)
        out[j] = tanhf(a[j]);
}

void add_row(const float *restrict x, const float *restrict b, float *restrict out,
             idx R, idx C)
{
    idx main = C - C % 8;
    for (idx i = 0; i < R; i++) {
        for (idx j = 0; j < main; j += 8)
            for (idx l = 0; l < 8; l++)
                out[i * C + j + l] = x[i * C + j + l] + b[j + l];
        for (idx k = main; k < C; k++)
            out[i * C + k] = x[i * C + k] + b[k];
    }
}

/* ------------------------------------------------------------------ reductions */

/* A vector<8xf32> accumulator per row, then the lanes added in order. */
void reduce_sum_last(const float *restrict x, float *restrict out, idx R, idx C)
{
    for (idx i = 0; i < R; i++) {
        float acc[8] = {0};
        for (idx j = 0; j < C; j += 8)
            for (idx l = 0; l < 8; l++)
                acc[l] += x[i * C + j + l];
        float s = acc[0];
        for (idx l = 1; l < 8; l++)
            s += acc[l];
        out[i] = s;
    }
}

void reduce_max_mid(const float *restrict x, float *restrict out, idx A, idx B, idx C)
{
    for (idx t = 0; t < A * C; t++)
        out[t] = -INFINITY;
    for (idx i = 0; i < A; i++)
        for (idx j = 0; j < B; j++)
            for (idx k = 0; k < C; k++)
                out[i * C + k] = fmaxf(out[i * C + k], x[(i * B + j) * C + k]);
}

void reduce_sum_mid(const float *restrict x, float *restrict out, idx A, idx B, idx C)
{
    for (idx t = 0; t < A * C; t++)
        out[t] = 0.0f;
    for (idx i = 0; i < A; i++)
        for (idx j = 0; j < B; j++)
            for (idx k = 0; k < C; k++)
                out[i * C + k] += x[(i * B + j) * C + k];
}

/* ------------------------------------------------------------ softmax, layernorm */

/* The four nests of the program, the row temporaries in one buffer (its i8 pool). */
void softmax(const float *restrict x, float *restrict out, idx R, idx C)
{
    float *pool = malloc(2 * (size_t)R * sizeof(float));
    float *mx = pool, *sm = pool + R;
#pragma omp parallel for
    for (idx i = 0; i < R; i++) {
        mx[i] = -INFINITY;
        sm[i] = 0.0f;
    }
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++)
            mx[i] = fmaxf(mx[i], x[i * C + j]);
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++) {
            float e = expf(x[i * C + j] - mx[i]);
            out[i * C + j] = e;
            sm[i] += e;
        }
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++)
            out[i * C + j] = out[i * C + j] / sm[i];
    free(pool);
}

void layernorm(const float *restrict x, float *restrict out, idx R, idx C)
{
    float *pool = malloc(2 * (size_t)R * sizeof(float));
    float *s = pool, *q = pool + R;
    float n = (float)C;
#pragma omp parallel for
    for (idx i = 0; i < R; i++) {
        s[i] = 0.0f;
        q[i] = 0.0f;
    }
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++)
            s[i] += x[i * C + j];
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++) {
            float d = x[i * C + j] - s[i] / n;
            q[i] += d * d;
        }
#pragma omp parallel for
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C; j++) {
            float sd = sqrtf(q[i] / n + 1e-5f);
            out[i * C + j] = (x[i * C + j] - s[i] / n) / sd;
        }
    free(pool);
}

/* --------------------------------------------------------------- matmul, gemm */

static idx min_(idx a, idx b) { return a < b ? a : b; }

/* krnl.memset, then the 4 x 8 x 8 tiles in (i, j, k) tile order, each compute tile
 * i, k, j inside (j innermost: the 8 columns of a row of the tile are one vector). */
static void matmul_tiles(const float *restrict A, const float *restrict B,
                         float *restrict Cm, idx M, idx N, idx K)
{
#pragma omp parallel for
    for (idx t = 0; t < M * N; t++)
        Cm[t] = 0.0f;
#pragma omp parallel for
    for (idx i0 = 0; i0 < M; i0 += 4)
        for (idx j0 = 0; j0 < N; j0 += 8)
            for (idx k0 = 0; k0 < K; k0 += 8)
                for (idx i = i0; i < min_(i0 + 4, M); i++)
                    for (idx k = k0; k < min_(k0 + 8, K); k++)
                        for (idx j = j0; j < min_(j0 + 8, N); j++)
                            Cm[i * N + j] += A[i * K + k] * B[k * N + j];
}

void matmul(const float *restrict A, const float *restrict B, float *restrict out,
            idx M, idx N, idx K)
{
    matmul_tiles(A, B, out, M, N, K);
}

void gemm_matmul(const float *restrict A, const float *restrict B,
                 const float *restrict Cb, float *restrict out, idx M, idx N, idx K)
{
    matmul_tiles(A, B, out, M, N, K);
    for (idx i = 0; i < M; i++)
        for (idx j = 0; j < N; j++)
            out[i * N + j] += Cb[j] * 0.5f;
}

/* The (i, j) nest with the k reduction into a scalar (the program's alloca). */
void gemm_loops(const float *restrict A, const float *restrict B,
                const float *restrict Cb, float *restrict out, idx M, idx N, idx K)
{
    for (idx i = 0; i < M; i++)
        for (idx j = 0; j < N; j++) {
            float acc = 0.0f;
            for (idx k = 0; k < K; k++)
                acc += A[i * K + k] * B[k * N + j];
            out[i * N + j] = acc + Cb[j] * 0.5f;
        }
}

/* ------------------------------------------------------------ conv, pooling */

void conv(const float *restrict img, const float *restrict w, float *restrict out,
          idx H, idx W, idx K)
{
    idx Ho = H - 2, Wo = W - 2;
#pragma omp parallel for
    for (idx t = 0; t < K * Ho * Wo; t++)
        out[t] = 0.0f;
#pragma omp parallel for
    for (idx k = 0; k < K; k++)
        for (idx r = 0; r < 3; r++)
            for (idx s = 0; s < 3; s++)
                for (idx i = 0; i < Ho; i++)
                    for (idx j = 0; j < Wo; j++)
                        out[(k * Ho + i) * Wo + j] +=
                            img[(i + r) * W + j + s] * w[(k * 3 + r) * 3 + s];
}

static void maxpool(const float *restrict x, float *restrict out, idx N, idx C, idx H,
                    idx W, idx KS, idx S)
{
    idx Ho = (H - KS) / S + 1, Wo = (W - KS) / S + 1;
    for (idx n = 0; n < N; n++)
        for (idx c = 0; c < C; c++) {
            const float *p = x + (n * C + c) * H * W;
            float *o = out + (n * C + c) * Ho * Wo;
            for (idx i = 0; i < Ho; i++)
                for (idx j = 0; j < Wo; j++) {
                    float acc = -INFINITY;
                    for (idx r = 0; r < KS; r++)
                        for (idx s = 0; s < KS; s++)
                            acc = fmaxf(acc, p[(i * S + r) * W + j * S + s]);
                    o[i * Wo + j] = acc;
                }
        }
}

void maxpool2(const float *restrict x, float *restrict out, idx N, idx C, idx H, idx W)
{
    maxpool(x, out, N, C, H, W, 2, 2);
}

void maxpool3(const float *restrict x, float *restrict out, idx N, idx C, idx H, idx W)
{
    maxpool(x, out, N, C, H, W, 3, 2);
}

/* ---------------------------------------------------- transpose, gather, concat */

void transpose(const float *restrict x, float *restrict out, idx A, idx B, idx C, idx D)
{
    for (idx i = 0; i < A; i++)
        for (idx j = 0; j < B; j++)
            for (idx k = 0; k < C; k++)
                for (idx m = 0; m < D; m++)
                    out[((i * C + k) * D + m) * B + j] = x[((i * B + j) * C + k) * D + m];
}

void gather(const float *restrict x, const int64_t *restrict ind, float *restrict out,
            idx V, idx D, idx B, idx S)
{
    for (idx i = 0; i < B; i++)
        for (idx j = 0; j < S; j++)
            for (idx k = 0; k < D; k++) {
                idx b = ind[i * S + j];
                idx n = b < 0 ? b + V : b;
                n = n < 0 ? 0 : n;
                idx row = n >= V ? V - 1 : n;
                out[(i * S + j) * D + k] = x[row * D + k];
            }
}

void concat(const float *restrict a, const float *restrict b, const float *restrict c,
            float *restrict out, idx R, idx C1, idx C2, idx C3)
{
    idx T = C1 + C2 + C3;
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C1; j++)
            out[i * T + j] = a[i * C1 + j];
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C2; j++)
            out[i * T + j + C1] = b[i * C2 + j];
    for (idx i = 0; i < R; i++)
        for (idx j = 0; j < C3; j++)
            out[i * T + j + C1 + C2] = c[i * C3 + j];
}
