/* harness.c: a native caller of robodyn_law.h, for the tests and `robodyn-ros bench control`
 * (robodyn_ros/apps/benchmarks/native.py compiles it with the system's gcc).
 *
 * harness_start runs a law's step `calls` times from a pthread of its own, the way a real-time
 * loop would, timing each call; the caller (Python) meanwhile holds the GIL. harness_cost times
 * a loop of calls on the calling thread; harness_call makes one (the fault matrix's host loop);
 * harness_continue and harness_reset call the header's law swap and observer reset. rnea_floor is
 * a Newton–Euler pass in plain C over the same packed parameters (columns given by -D from
 * dynamics/layout.py): the floor a native law's cost has. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <math.h>
#include "robodyn_law.h"

#ifndef NC
#error "compile with the packed parameters' columns (-DNC=... -DMASS=... ): see native.py"
#endif

typedef struct {
    robodyn_law *law;
    const double *inputs;   /* per call: q, qd, q_ref, qd_ref, qdd_ref (observer: q, qd, tau), dt */
    int64_t calls;
    double *outputs;        /* per call: dof values */
    int32_t *status;        /* per call */
    int64_t *nanoseconds;   /* per call */
    int32_t *done;          /* set to 1 when every call is made */
    pthread_t thread;
} harness_run;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t stride(const robodyn_law *law)
{
    return (law->kind == ROBODYN_KIND_OBSERVER ? 3 : 5) * law->dof + 1;
}

static int32_t call(robodyn_law *law, const double *x, double *out)
{
    int64_t n = law->dof;
    if (law->kind == ROBODYN_KIND_OBSERVER)
        return robodyn_observer_step(law, x, x + n, x + 2 * n, x[3 * n], out);
    return robodyn_law_step(law, x, x + n, x + 2 * n, x + 3 * n, x + 4 * n, x[5 * n], out);
}

static void *run_calls(void *arg)
{
    harness_run *run = arg;
    robodyn_law *law = run->law;
    for (int64_t k = 0; k < run->calls; k++) {
        int64_t start = now_ns();
        run->status[k] = call(law, run->inputs + k * stride(law), run->outputs + k * law->dof);
        run->nanoseconds[k] = now_ns() - start;
    }
    __atomic_store_n(run->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Start the calls on a new thread, under SCHED_FIFO at `priority` when it is > 0 and this
 * process may (else under the default policy: *realtime says which); NULL if no thread started. */
harness_run *harness_start(robodyn_law *law, const double *inputs, int64_t calls,
                           double *outputs, int32_t *status, int64_t *nanoseconds, int32_t *done,
                           int32_t priority, int32_t *realtime)
{
    if (law->abi != ROBODYN_LAW_ABI)
        return NULL;
    harness_run *run = malloc(sizeof *run);
    if (run == NULL)
        return NULL;
    *run = (harness_run){law, inputs, calls, outputs, status, nanoseconds, done, 0};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    struct sched_param param = {.sched_priority = priority};
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &param);
    *realtime = priority > 0 && pthread_create(&run->thread, &attr, run_calls, run) == 0;
    pthread_attr_destroy(&attr);
    if (!*realtime && pthread_create(&run->thread, NULL, run_calls, run) != 0) {
        free(run);
        return NULL;
    }
    return run;
}

void harness_join(harness_run *run)
{
    pthread_join(run->thread, NULL);
    free(run);
}

/* Seconds per call of `calls` calls in a row on this thread (the inputs cycled through). */
double harness_cost(robodyn_law *law, const double *inputs, int64_t rows, int64_t calls,
                    double *out)
{
    int64_t start = now_ns();
    for (int64_t k = 0; k < calls; k++)
        call(law, inputs + (k % rows) * stride(law), out);
    return (now_ns() - start) * 1e-9 / calls;
}

/* A law swap as a real-time thread makes it (robodyn_law_continue). */
int32_t harness_continue(robodyn_law *next, const robodyn_law *previous)
{
    return robodyn_law_continue(next, previous);
}

/* The observer's reset, called from C. */
int32_t harness_reset(robodyn_law *law, const double *q, const double *qd)
{
    return robodyn_observer_reset(law, q, qd);
}

static int64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One call on this thread, as a host's update() makes it: its status; *nanoseconds the CPU time
 * it took (the time the thread waited for a CPU on a loaded machine left out). */
int32_t harness_call(robodyn_law *law, const double *x, double *out, int64_t *nanoseconds)
{
    int64_t start = cpu_ns();
    int32_t status = call(law, x, out);
    *nanoseconds = cpu_ns() - start;
    return status;
}

/* ------------------------------------------------------------------ the floor: RNEA in C */

#define AT(i, c) P[(i) * NC + (c)]

/* tau = M(q) qdd + C(q, qd) qd + g(q) + friction, as robodyn_ros's Newton–Euler kernel with
 * gravity and friction on; w: 24 * n doubles of workspace. */
void rnea_floor(const double *P, int64_t n, const double *q, const double *qd, const double *qdd,
                double *w, double *tau)
{
    double wv[3] = {0, 0, 0}, a[3] = {0, 0, 0};
    double v[3] = {-AT(n, GRAVITY_VECTOR), -AT(n, GRAVITY_VECTOR + 1), -AT(n, GRAVITY_VECTOR + 2)};
    for (int64_t i = 0; i < n; i++) {
        double *R = w + 12 * i, *p = R + 9;
        const double *R0 = &AT(i, 0);
        int prismatic = AT(i, PRISMATIC) != 0.0;
        double c = prismatic ? 1.0 : cos(q[i]), s = prismatic ? 0.0 : sin(q[i]);
        for (int r = 0; r < 3; r++) {   /* R = R0 Rz(q), p = p0 (+ q R0 z) */
            R[3 * r] = R0[3 * r] * c + R0[3 * r + 1] * s;
            R[3 * r + 1] = R0[3 * r + 1] * c - R0[3 * r] * s;
            R[3 * r + 2] = R0[3 * r + 2];
            p[r] = AT(i, 9 + r) + (prismatic ? R0[3 * r + 2] * q[i] : 0.0);
        }
        /* origin i's acceleration in frame i-1: v + a x p + w x (w x p), then all into frame i */
        double wp[3] = {wv[1] * p[2] - wv[2] * p[1], wv[2] * p[0] - wv[0] * p[2],
                        wv[0] * p[1] - wv[1] * p[0]};
        double e[3] = {v[0] + (a[1] * p[2] - a[2] * p[1]) + (wv[1] * wp[2] - wv[2] * wp[1]),
                       v[1] + (a[2] * p[0] - a[0] * p[2]) + (wv[2] * wp[0] - wv[0] * wp[2]),
                       v[2] + (a[0] * p[1] - a[1] * p[0]) + (wv[0] * wp[1] - wv[1] * wp[0])};
        double nw[3], na[3];
        for (int k = 0; k < 3; k++) {
            v[k] = R[k] * e[0] + R[3 + k] * e[1] + R[6 + k] * e[2];
            nw[k] = R[k] * wv[0] + R[3 + k] * wv[1] + R[6 + k] * wv[2];
            na[k] = R[k] * a[0] + R[3 + k] * a[1] + R[6 + k] * a[2];
        }
        if (prismatic) {
            v[0] += 2.0 * nw[1] * qd[i];
            v[1] -= 2.0 * nw[0] * qd[i];
            v[2] += qdd[i];
        } else {
            na[0] += nw[1] * qd[i];
            na[1] -= nw[0] * qd[i];
            na[2] += qdd[i];
            nw[2] += qd[i];
        }
        for (int k = 0; k < 3; k++) {
            wv[k] = nw[k];
            a[k] = na[k];
        }
        /* the net force and moment on body i about origin i (mass m, first moment h, inertia I) */
        double m = AT(i, MASS), h[3] = {AT(i, FIRST_MOMENT), AT(i, FIRST_MOMENT + 1),
                                        AT(i, FIRST_MOMENT + 2)};
        const double *I = &AT(i, INERTIA_AT_ORIGIN);   /* xx yy zz xy yz xz */
        double wh[3] = {wv[1] * h[2] - wv[2] * h[1], wv[2] * h[0] - wv[0] * h[2],
                        wv[0] * h[1] - wv[1] * h[0]};
        double Iw[3] = {I[0] * wv[0] + I[3] * wv[1] + I[5] * wv[2],
                        I[3] * wv[0] + I[1] * wv[1] + I[4] * wv[2],
                        I[5] * wv[0] + I[4] * wv[1] + I[2] * wv[2]};
        double *F = R + 12 * n, *N = F + 3;   /* the second half of the workspace */
        F[0] = m * v[0] + (a[1] * h[2] - a[2] * h[1]) + (wv[1] * wh[2] - wv[2] * wh[1]);
        F[1] = m * v[1] + (a[2] * h[0] - a[0] * h[2]) + (wv[2] * wh[0] - wv[0] * wh[2]);
        F[2] = m * v[2] + (a[0] * h[1] - a[1] * h[0]) + (wv[0] * wh[1] - wv[1] * wh[0]);
        N[0] = (I[0] * a[0] + I[3] * a[1] + I[5] * a[2]) + (wv[1] * Iw[2] - wv[2] * Iw[1])
               + (h[1] * v[2] - h[2] * v[1]);
        N[1] = (I[3] * a[0] + I[1] * a[1] + I[4] * a[2]) + (wv[2] * Iw[0] - wv[0] * Iw[2])
               + (h[2] * v[0] - h[0] * v[2]);
        N[2] = (I[5] * a[0] + I[4] * a[1] + I[2] * a[2]) + (wv[0] * Iw[1] - wv[1] * Iw[0])
               + (h[0] * v[1] - h[1] * v[0]);
    }
    double f[3] = {0, 0, 0}, nm[3] = {0, 0, 0};
    for (int64_t i = n - 1; i >= 0; i--) {
        double *R = w + 12 * i, *p = R + 9, *F = R + 12 * n, *N = F + 3;
        for (int k = 0; k < 3; k++) {
            f[k] += F[k];
            nm[k] += N[k];
        }
        /* the friction summed as newton_euler.joint_friction sums it, then added: bit for bit */
        double fr = AT(i, VISCOUS) * qd[i] + AT(i, FRICTION_OFFSET);
        if (AT(i, COULOMB_TANH) > 0.0 || AT(i, COULOMB_BAND) > 0.0) {
            double s = AT(i, COULOMB_TANH) > 0.0 ? tanh(qd[i] / AT(i, COULOMB_TANH))
                       : fmin(fmax(qd[i] / AT(i, COULOMB_BAND), -1.0), 1.0);
            fr += (s > 0.0 ? AT(i, COULOMB_POS) : AT(i, COULOMB_NEG)) * s;
        } else if (qd[i] > 0.0)
            fr += AT(i, COULOMB_POS);
        else if (qd[i] < 0.0)
            fr -= AT(i, COULOMB_NEG);
        double t = (AT(i, PRISMATIC) != 0.0 ? f[2] : nm[2]) + AT(i, ARMATURE) * qdd[i] + fr;
        tau[i] = t;
        if (i > 0) {   /* (R f, R n + p x R f): into frame i-1 */
            double g[3], h[3];
            for (int k = 0; k < 3; k++) {
                g[k] = R[3 * k] * f[0] + R[3 * k + 1] * f[1] + R[3 * k + 2] * f[2];
                h[k] = R[3 * k] * nm[0] + R[3 * k + 1] * nm[1] + R[3 * k + 2] * nm[2];
            }
            nm[0] = h[0] + (p[1] * g[2] - p[2] * g[1]);
            nm[1] = h[1] + (p[2] * g[0] - p[0] * g[2]);
            nm[2] = h[2] + (p[0] * g[1] - p[1] * g[0]);
            for (int k = 0; k < 3; k++)
                f[k] = g[k];
        }
    }
}

/* Seconds per rnea_floor call over `calls` calls, cycling through `rows` rows of (q, qd, qdd);
 * w: 24 * n doubles. */
double rnea_floor_cost(const double *P, int64_t n, const double *rows_of_states, int64_t rows,
                       int64_t calls, double *w, double *tau)
{
    int64_t start = now_ns();
    for (int64_t k = 0; k < calls; k++) {
        const double *x = rows_of_states + (k % rows) * 3 * n;
        rnea_floor(P, n, x, x + n, x + 2 * n, w, tau);
    }
    return (now_ns() - start) * 1e-9 / calls;
}
