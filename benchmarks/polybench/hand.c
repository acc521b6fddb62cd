/*
 * Hand-written C versions of the PolyBench kernels of this directory: the
 * baseline that generated code is measured against.
 *
 * Written from PolyBench 4.2's C kernels (kernel_gemm etc.): their loop order,
 * plain loops, each statement evaluated left to right as PolyBench writes it
 * and as the Krnl files of this directory do, so that every element sees the
 * same operations in the same order (the compiler may still contract a * b + c
 * into one fused multiply-add, which rounds once instead of twice).
 *
 * Each function takes the arguments of the Krnl function of the same name, in
 * the same order, and updates the arrays in place. Every array comes as a
 * pointer followed by its whole shape (rows, then columns, ...; C order): the
 * arrays may be larger than the problem sizes, only their leading part is
 * used, and rows are indexed with the array's own row length. Arrays that are
 * distinct arguments must not overlap (`restrict`); c_kernels.py checks it.
 *
 * OpenMP: `#pragma omp parallel for` marks the loops that can run in parallel
 * (for the stencils: the spatial loops, inside the sequential time loop).
 * Without -fopenmp the pragmas are ignored and the same source is the
 * single-thread version. Loops that carry a dependence have none: the time
 * loops, seidel_2d's sweep, lu's i loop and the j < i part of each row,
 * floyd_warshall's k loop, and the row loops of the sums across rows (y in
 * atax, s in bicg).
 */

#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

typedef int64_t idx;

/* The thread count of the next parallel regions of the calling thread. */
void polybench_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

/* The thread count the next parallel region of the calling thread would use. */
int polybench_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* ------------------------------------------------------------ linear algebra */

/* C := alpha * A * B + beta * C (PolyBench's i, k, j order). */
void gemm(idx NI, idx NJ, idx NK, double alpha, double beta,
          double *restrict C, idx C0, idx C1,
          const double *restrict A, idx A0, idx A1,
          const double *restrict B, idx B0, idx B1)
{
    (void)C0; (void)A0; (void)B0;
#pragma omp parallel for
    for (idx i = 0; i < NI; i++) {
        for (idx j = 0; j < NJ; j++)
            C[i * C1 + j] *= beta;
        for (idx k = 0; k < NK; k++)
            for (idx j = 0; j < NJ; j++)
                C[i * C1 + j] += alpha * A[i * A1 + k] * B[k * B1 + j];
    }
}

/* tmp := alpha * A * B; D := tmp * C + beta * D. */
void two_mm(idx NI, idx NJ, idx NK, idx NL, double alpha, double beta,
            double *restrict tmp, idx tmp0, idx tmp1,
            const double *restrict A, idx A0, idx A1,
            const double *restrict B, idx B0, idx B1,
            const double *restrict C, idx C0, idx C1,
            double *restrict D, idx D0, idx D1)
{
    (void)tmp0; (void)A0; (void)B0; (void)C0; (void)D0;
#pragma omp parallel for
    for (idx i = 0; i < NI; i++)
        for (idx j = 0; j < NJ; j++) {
            tmp[i * tmp1 + j] = 0.0;
            for (idx k = 0; k < NK; k++)
                tmp[i * tmp1 + j] += alpha * A[i * A1 + k] * B[k * B1 + j];
        }
#pragma omp parallel for
    for (idx i = 0; i < NI; i++)
        for (idx j = 0; j < NL; j++) {
            D[i * D1 + j] *= beta;
            for (idx k = 0; k < NJ; k++)
                D[i * D1 + j] += tmp[i * tmp1 + k] * C[k * C1 + j];
        }
}

/* E := A * B; F := C * D; G := E * F. */
void three_mm(idx NI, idx NJ, idx NK, idx NL, idx NM,
              double *restrict E, idx E0, idx E1,
              const double *restrict A, idx A0, idx A1,
              const double *restrict B, idx B0, idx B1,
              double *restrict F, idx F0, idx F1,
              const double *restrict C, idx C0, idx C1,
              const double *restrict D, idx D0, idx D1,
              double *restrict G, idx G0, idx G1)
{
    (void)E0; (void)A0; (void)B0; (void)F0; (void)C0; (void)D0; (void)G0;
#pragma omp parallel for
    for (idx i = 0; i < NI; i++)
        for (idx j = 0; j < NJ; j++) {
            E[i * E1 + j] = 0.0;
            for (idx k = 0; k < NK; k++)
                E[i * E1 + j] += A[i * A1 + k] * B[k * B1 + j];
        }
#pragma omp parallel for
    for (idx i = 0; i < NJ; i++)
        for (idx j = 0; j < NL; j++) {
            F[i * F1 + j] = 0.0;
            for (idx k = 0; k < NM; k++)
                F[i * F1 + j] += C[i * C1 + k] * D[k * D1 + j];
        }
#pragma omp parallel for
    for (idx i = 0; i < NI; i++)
        for (idx j = 0; j < NL; j++) {
            G[i * G1 + j] = 0.0;
            for (idx k = 0; k < NJ; k++)
                G[i * G1 + j] += E[i * E1 + k] * F[k * F1 + j];
        }
}

/*
 * y := A^T * (A * x). PolyBench's row loop holds both products; it is split
 * here (tmp = A x for every row, then y += A^T tmp row by row) so that the
 * first product can run in parallel. Every y[j] still receives its row updates
 * in increasing row order, and tmp[i] is final before row i's y update.
 */
void atax(idx M, idx N,
          const double *restrict A, idx A0, idx A1,
          const double *restrict x, idx x0,
          double *restrict y, idx y0,
          double *restrict tmp, idx tmp0)
{
    (void)A0; (void)x0; (void)y0; (void)tmp0;
    for (idx i = 0; i < N; i++)
        y[i] = 0.0;
#pragma omp parallel for
    for (idx i = 0; i < M; i++) {
        tmp[i] = 0.0;
        for (idx j = 0; j < N; j++)
            tmp[i] = tmp[i] + A[i * A1 + j] * x[j];
    }
    for (idx i = 0; i < M; i++)
        for (idx j = 0; j < N; j++)
            y[j] = y[j] + A[i * A1 + j] * tmp[i];
}

/*
 * s := A^T * r; q := A * p. PolyBench updates s[j] and q[i] in one i, j nest;
 * split here as in atax (q row by row, in parallel; then s, whose elements
 * are sums across rows). Each element's updates keep their order.
 */
void bicg(idx M, idx N,
          const double *restrict A, idx A0, idx A1,
          double *restrict s, idx s0,
          double *restrict q, idx q0,
          const double *restrict p, idx p0,
          const double *restrict r, idx r0)
{
    (void)A0; (void)s0; (void)q0; (void)p0; (void)r0;
    for (idx i = 0; i < M; i++)
        s[i] = 0.0;
#pragma omp parallel for
    for (idx i = 0; i < N; i++) {
        q[i] = 0.0;
        for (idx j = 0; j < M; j++)
            q[i] = q[i] + A[i * A1 + j] * p[j];
    }
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < M; j++)
            s[j] = s[j] + r[i] * A[i * A1 + j];
}

/* x1 += A * y1; x2 += A^T * y2. */
void mvt(idx N,
         double *restrict x1, idx x10,
         double *restrict x2, idx x20,
         const double *restrict y1, idx y10,
         const double *restrict y2, idx y20,
         const double *restrict A, idx A0, idx A1)
{
    (void)x10; (void)x20; (void)y10; (void)y20; (void)A0;
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < N; j++)
            x1[i] = x1[i] + A[i * A1 + j] * y1[j];
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < N; j++)
            x2[i] = x2[i] + A[j * A1 + i] * y2[j];
}

/* A += u1 v1^T + u2 v2^T; x += beta * A^T y + z; w += alpha * A x. */
void gemver(idx N, double alpha, double beta,
            double *restrict A, idx A0, idx A1,
            const double *restrict u1, idx u10,
            const double *restrict v1, idx v10,
            const double *restrict u2, idx u20,
            const double *restrict v2, idx v20,
            double *restrict w, idx w0,
            double *restrict x, idx x0,
            const double *restrict y, idx y0,
            const double *restrict z, idx z0)
{
    (void)A0; (void)u10; (void)v10; (void)u20; (void)v20;
    (void)w0; (void)x0; (void)y0; (void)z0;
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < N; j++)
            A[i * A1 + j] = A[i * A1 + j] + u1[i] * v1[j] + u2[i] * v2[j];
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < N; j++)
            x[i] = x[i] + beta * A[j * A1 + i] * y[j];
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        x[i] = x[i] + z[i];
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < N; j++)
            w[i] = w[i] + alpha * A[i * A1 + j] * x[j];
}

/*
 * Lower triangle (j <= i) of C := alpha * A * A^T + beta * C. Rows grow with
 * i: cyclic distribution of the rows keeps the threads' shares even.
 */
void syrk(idx N, idx M, double alpha, double beta,
          double *restrict C, idx C0, idx C1,
          const double *restrict A, idx A0, idx A1)
{
    (void)C0; (void)A0;
#pragma omp parallel for schedule(static, 1)
    for (idx i = 0; i < N; i++) {
        for (idx j = 0; j <= i; j++)
            C[i * C1 + j] *= beta;
        for (idx k = 0; k < M; k++)
            for (idx j = 0; j <= i; j++)
                C[i * C1 + j] += alpha * A[i * A1 + k] * A[j * A1 + k];
    }
}

/* ----------------------------------------------------------------- datamining */

/*
 * mean := column means of data; data -= mean; cov := data^T data / (n - 1),
 * upper triangle computed and mirrored. Row i of the last nest writes
 * cov[i][j] and cov[j][i] for j >= i only: the rows are independent.
 */
void covariance(idx M, idx N, double float_n,
                double *restrict data, idx data0, idx data1,
                double *restrict cov, idx cov0, idx cov1,
                double *restrict mean, idx mean0)
{
    (void)data0; (void)cov0; (void)mean0;
#pragma omp parallel for
    for (idx j = 0; j < M; j++) {
        mean[j] = 0.0;
        for (idx i = 0; i < N; i++)
            mean[j] += data[i * data1 + j];
        mean[j] /= float_n;
    }
#pragma omp parallel for
    for (idx i = 0; i < N; i++)
        for (idx j = 0; j < M; j++)
            data[i * data1 + j] -= mean[j];
#pragma omp parallel for schedule(static, 1)
    for (idx i = 0; i < M; i++)
        for (idx j = i; j < M; j++) {
            cov[i * cov1 + j] = 0.0;
            for (idx k = 0; k < N; k++)
                cov[i * cov1 + j] += data[k * data1 + i] * data[k * data1 + j];
            cov[i * cov1 + j] /= (float_n - 1.0);
            cov[j * cov1 + i] = cov[i * cov1 + j];
        }
}

/* ------------------------------------------------------------------- stencils */

void jacobi_1d(idx TSTEPS, idx N,
               double *restrict A, idx A0,
               double *restrict B, idx B0)
{
    (void)A0; (void)B0;
    for (idx t = 0; t < TSTEPS; t++) {
#pragma omp parallel for
        for (idx i = 1; i < N - 1; i++)
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
#pragma omp parallel for
        for (idx i = 1; i < N - 1; i++)
            A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
    }
}

void jacobi_2d(idx TSTEPS, idx N,
               double *restrict A, idx A0, idx A1,
               double *restrict B, idx B0, idx B1)
{
    (void)A0; (void)B0;
    for (idx t = 0; t < TSTEPS; t++) {
#pragma omp parallel for
        for (idx i = 1; i < N - 1; i++)
            for (idx j = 1; j < N - 1; j++)
                B[i * B1 + j] = 0.2 * (A[i * A1 + j] + A[i * A1 + j - 1] + A[i * A1 + j + 1]
                                       + A[(i + 1) * A1 + j] + A[(i - 1) * A1 + j]);
#pragma omp parallel for
        for (idx i = 1; i < N - 1; i++)
            for (idx j = 1; j < N - 1; j++)
                A[i * A1 + j] = 0.2 * (B[i * B1 + j] + B[i * B1 + j - 1] + B[i * B1 + j + 1]
                                       + B[(i + 1) * B1 + j] + B[(i - 1) * B1 + j]);
    }
}

/* One 7-point step src -> dst; s1, s2 (d1, d2) are the strides of src's (dst's) first two axes. */
static void heat_step(idx N, const double *restrict src, idx s1, idx s2,
                      double *restrict dst, idx d1, idx d2)
{
#pragma omp parallel for
    for (idx i = 1; i < N - 1; i++)
        for (idx j = 1; j < N - 1; j++)
            for (idx k = 1; k < N - 1; k++) {
                const double *c = src + i * s1 + j * s2 + k;
                dst[i * d1 + j * d2 + k] = 0.125 * (c[s1] - 2.0 * c[0] + c[-s1])
                                         + 0.125 * (c[s2] - 2.0 * c[0] + c[-s2])
                                         + 0.125 * (c[1] - 2.0 * c[0] + c[-1])
                                         + c[0];
            }
}

void heat_3d(idx TSTEPS, idx N,
             double *restrict A, idx A0, idx A1, idx A2,
             double *restrict B, idx B0, idx B1, idx B2)
{
    (void)A0; (void)B0;
    for (idx t = 1; t <= TSTEPS; t++) {
        heat_step(N, A, A1 * A2, A2, B, B1 * B2, B2);
        heat_step(N, B, B1 * B2, B2, A, A1 * A2, A2);
    }
}

void fdtd_2d(idx TMAX, idx NX, idx NY,
             double *restrict ex, idx ex0, idx ex1,
             double *restrict ey, idx ey0, idx ey1,
             double *restrict hz, idx hz0, idx hz1,
             const double *restrict _fict_, idx _fict_0)
{
    (void)ex0; (void)ey0; (void)hz0; (void)_fict_0;
    for (idx t = 0; t < TMAX; t++) {
        for (idx j = 0; j < NY; j++)
            ey[j] = _fict_[t];
#pragma omp parallel for
        for (idx i = 1; i < NX; i++)
            for (idx j = 0; j < NY; j++)
                ey[i * ey1 + j] = ey[i * ey1 + j] - 0.5 * (hz[i * hz1 + j] - hz[(i - 1) * hz1 + j]);
#pragma omp parallel for
        for (idx i = 0; i < NX; i++)
            for (idx j = 1; j < NY; j++)
                ex[i * ex1 + j] = ex[i * ex1 + j] - 0.5 * (hz[i * hz1 + j] - hz[i * hz1 + j - 1]);
#pragma omp parallel for
        for (idx i = 0; i < NX - 1; i++)
            for (idx j = 0; j < NY - 1; j++)
                hz[i * hz1 + j] = hz[i * hz1 + j]
                                  - 0.7 * (ex[i * ex1 + j + 1] - ex[i * ex1 + j]
                                           + ey[(i + 1) * ey1 + j] - ey[i * ey1 + j]);
    }
}

/* In place: every point reads neighbours already updated in this sweep. No parallel loop. */
void seidel_2d(idx TSTEPS, idx N, double *restrict A, idx A0, idx A1)
{
    (void)A0;
    for (idx t = 0; t < TSTEPS; t++)
        for (idx i = 1; i < N - 1; i++)
            for (idx j = 1; j < N - 1; j++)
                A[i * A1 + j] = (A[(i - 1) * A1 + j - 1] + A[(i - 1) * A1 + j]
                                 + A[(i - 1) * A1 + j + 1] + A[i * A1 + j - 1]
                                 + A[i * A1 + j] + A[i * A1 + j + 1]
                                 + A[(i + 1) * A1 + j - 1] + A[(i + 1) * A1 + j]
                                 + A[(i + 1) * A1 + j + 1]) / 9.0;
}

/* ----------------------------------------------------------------------- solvers */

/*
 * In-place LU without pivoting, PolyBench 4.2's row-by-row (i outer) form. Row i
 * depends on the rows above it, and its j < i part on its own earlier columns;
 * its j >= i part only reads row i's final j < i part and the rows above: the
 * one parallel loop.
 */
void lu(idx N, double *restrict A, idx A0, idx A1)
{
    (void)A0;
    for (idx i = 0; i < N; i++) {
        for (idx j = 0; j < i; j++) {
            for (idx k = 0; k < j; k++)
                A[i * A1 + j] -= A[i * A1 + k] * A[k * A1 + j];
            A[i * A1 + j] /= A[j * A1 + j];
        }
#pragma omp parallel for
        for (idx j = i; j < N; j++)
            for (idx k = 0; k < i; k++)
                A[i * A1 + j] -= A[i * A1 + k] * A[k * A1 + j];
    }
}

/* --------------------------------------------------------------------- medley */

/*
 * All-pairs shortest paths in place. Step k reads row k and column k, which it
 * changes only where path[k][k] < 0 (a negative cycle): with non-negative
 * path[k][k], as PolyBench's data and sizes.py's have, the rows i of one step
 * are independent.
 */
void floyd_warshall(idx N, int32_t *path, idx path0, idx path1)
{
    (void)path0;
    for (idx k = 0; k < N; k++) {
#pragma omp parallel for
        for (idx i = 0; i < N; i++)
            for (idx j = 0; j < N; j++)
                path[i * path1 + j] = path[i * path1 + j] < path[i * path1 + k] + path[k * path1 + j]
                                          ? path[i * path1 + j]
                                          : path[i * path1 + k] + path[k * path1 + j];
    }
}
