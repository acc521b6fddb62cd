/* How much a second thread adds on this machine, for two kinds of work.
 *
 * Cloud machines often give "2 cores" that are the two hyperthreads of one physical
 * core: a second thread then adds nothing to work that keeps the core's vector units
 * busy, and much to work that waits on latencies. The tuned kernels are of the first
 * kind more often than C's natural-order loops, so C's OpenMP speedup is no measure of
 * what two threads can give the tuned kernel. Each probe does the same total work on
 * 1 thread and on N threads (each thread on its own L1-resident data) and prints the
 * speedup, the median of 5 runs:
 *
 *   vector: x = x * b + b on 1024 floats, vectorized (mul and add, no FMA: the kernels
 *           are compiled without contraction too);
 *   chain:  a dependent scalar chain (latency-bound, one value at a time).
 *
 * Usage: core_probe THREADS (built with gcc -O3 -march=native -ffp-contract=off -fopenmp).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024
#define PARTS 64

static float data[PARTS][N] __attribute__((aligned(64)));
static float coef[N] __attribute__((aligned(64)));
static double chains[PARTS * 8];

static void vector_part(int p, long reps)
{
    for (long r = 0; r < reps; r++)
        for (int j = 0; j < N; j++)
            data[p][j] = data[p][j] * coef[j] + coef[j];
}

static void chain_part(int p, long reps)
{
    double x = chains[p * 8];
    for (long r = 0; r < reps; r++)
        x = x * 0.999999 + 1e-6;
    chains[p * 8] = x;
}

static double timed(void (*part)(int, long), long reps, int threads, int parts)
{
    omp_set_num_threads(threads);
    double t = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int p = 0; p < parts; p++)
        part(p, reps);
    return omp_get_wtime() - t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double speedup(void (*part)(int, long), long reps, int threads)
{
    double r[5];
    timed(part, reps / 10, threads, threads); /* wake the threads */
    for (int k = 0; k < 5; k++) {
        /* The same total work: `threads` parts, on 1 thread, then on `threads`. */
        double one = timed(part, reps, 1, threads);
        double many = timed(part, reps, threads, threads);
        r[k] = one / many;
    }
    qsort(r, 5, sizeof r[0], cmp);
    return r[2];
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    if (threads < 1 || threads > PARTS) {
        fprintf(stderr, "core_probe: THREADS must be 1..%d\n", PARTS);
        return 2;
    }
    for (int j = 0; j < N; j++) {
        coef[j] = 0.5f;
        for (int p = 0; p < PARTS; p++)
            data[p][j] = 0.5f;
    }
    for (int p = 0; p < PARTS; p++)
        chains[p * 8] = 1.0;
    printf("vector %.3f\n", speedup(vector_part, 100000, threads));
    printf("chain %.3f\n", speedup(chain_part, 50000000, threads));
    /* Keep the results alive. */
    return data[0][1] + chains[0] < 0;
}
