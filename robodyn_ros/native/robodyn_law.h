/* robodyn_law.h: the C entry point of a robodyn_ros control law (doc/native.md).
 *
 * Python builds the law once, from a model and its parameters, and hands out a robodyn_law:
 *
 *     from robodyn_ros.control.native import native_law, native_observer
 *     handle = native_law(law, effort_limit, rate_limit, compensates,   # keep `handle` alive
 *                         drive_period,                                 # the drive's cycle (s)
 *                         last_command=previous.last_command)          # what the drive holds
 *     address = handle.address                                         # a robodyn_law *
 *
 * A native thread (a ros2_control controller's update(), an Orocos component, an EtherCAT cycle)
 * then calls, with no Python anywhere in the call:
 *
 *     int32_t status = robodyn_law_step(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort);
 *
 * GUARANTEES of a step, for every input:
 *   - it takes no lock and never the GIL: it is machine code compiled by numba (a cfunc), which
 *     touches no Python object; a failure inside is caught in that code, not printed by Python;
 *   - it allocates nothing: its arrays are the law's, allocated when it was built, and its
 *     workspaces are on the calling thread's stack (a few kB; at most 32 kB per kernel);
 *   - it raises nothing and returns a status (below); effort is written only when status >= 0;
 *   - effort equals what the Python law's compute() followed by the node's command stage gives
 *     for the same calls, bit for bit (test/test_native.py);
 *   - its time is bounded: no loop depends on the data but the task-space laws' Jacobi sweeps
 *     (at most 16 of a 6 x 6 matrix).
 * NOT guaranteed: reentrancy. A law has one state (integral, estimate, filters, last command):
 * call one law from one thread at a time, and never at the same time as Python's compute() on
 * the same law. Two laws (two handles) may run on two threads.
 *
 * All arrays are double, dof values, in the model's chain order (the joints of the URDF chain,
 * base to tip: handle.owner.model.joint_names), C-contiguous. */
#ifndef ROBODYN_LAW_H
#define ROBODYN_LAW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the layout version of struct robodyn_law; check law->abi == ROBODYN_LAW_ABI before a call */
#define ROBODYN_LAW_ABI 2

/* what step is */
#define ROBODYN_KIND_LAW 1      /* step.law */
#define ROBODYN_KIND_OBSERVER 2 /* step.observer: the momentum observer */

/* status >= 0: effort written; these bits say what the command stage did to it */
#define ROBODYN_OK 0
#define ROBODYN_SATURATED 1     /* some joint clamped at effort_limit */
#define ROBODYN_RATE_LIMITED 2  /* some joint held to rate_limit */
/* status < 0: nothing written to effort (send your own safe command) */
#define ROBODYN_BAD_INPUT (-1)        /* NaN or inf in an input, dt < 0 (observer: dt <= 0);
                                         the law's state is untouched */
#define ROBODYN_NONFINITE_EFFORT (-2) /* the law's torque (or what the drive adds) is NaN or inf;
                                         the law's state has advanced */
#define ROBODYN_FAILED (-3)           /* a kernel refused (e.g. a mass matrix not positive
                                         definite); the law's state may have advanced */
#define ROBODYN_STALE (-4)            /* the handle's owner changed what the handle copied (the
                                         observer's follow(), a task-space law's set_target or
                                         clear_target): nothing done; build a new handle */

typedef struct robodyn_law robodyn_law;

/* A call advances the law's state (its integral, estimate, filters, last command): the law is
 * not const. It writes what the struct's non-const pointers point to and nothing the struct marks
 * const: not the struct's own fields, the model, the limits or the table (test_native.py). */

/* q, qd: measured; q_ref, qd_ref, qdd_ref: the reference; dt (s): time since the last call
 * (the integral, the adaptation and the filters use it; 0 on the first call);
 * effort: out, the command to send. */
typedef int32_t (*robodyn_law_fn)(robodyn_law *law, const double *q, const double *qd,
                                  const double *q_ref, const double *qd_ref,
                                  const double *qdd_ref, double dt, double *effort);
/* the momentum observer (De Luca & Mattone 2003): tau, the torque applied over the dt (> 0) that
 * ended at (q, qd), in N m (N): an arm that measures motor currents passes each current times its
 * drive gain, as the node converts them (measured_effort); residual: out, r ~ the external joint
 * torque (also at law->estimate). Every input and the new residual are checked before anything is
 * kept: status < 0 leaves the observer as it was (reset it at the next good state: its next step
 * differences from the last state it kept). */
typedef int32_t (*robodyn_observer_fn)(robodyn_law *law, const double *q, const double *qd,
                                       const double *tau, double dt, double *residual);
/* the observer started afresh at the state (q, qd): r = 0, its momentum taken there (as Python's
 * reset; after a status < 0, a pause, a new activation). */
typedef int32_t (*robodyn_reset_fn)(robodyn_law *law, const double *q, const double *qd);

/* Every field is 8 bytes. The buffers belong to the Python handle: valid while it lives. */
struct robodyn_law {
    int64_t abi;               /* ROBODYN_LAW_ABI */
    int64_t kind;              /* ROBODYN_KIND_* */
    int64_t dof;               /* joints: the length of every array argument */
    union {
        robodyn_law_fn law;
        robodyn_observer_fn observer;
    } step;                    /* the cfunc */
    robodyn_reset_fn reset;    /* the observer's reset; NULL for a law (build a new handle) */
    const double *model;       /* the model's packed parameters ((dof + 1) x 29, row-major) as
                                  built (an observer following an adaptive law works on a copy of
                                  its own, which takes the estimates) */
    int64_t model_size;        /* doubles */
    double *workspace;         /* the law's working arrays (read them between calls only) */
    int64_t workspace_size;    /* doubles */
    double *estimate;          /* adaptive law: its parameter estimate; observer: the residual;
                                  pd/computed torque: the integral of e; else NULL */
    int64_t estimate_size;     /* doubles */
    const double *effort_limit;/* dof values, N m or N (laws; NULL for the observer) */
    const double *rate_limit;  /* dof values, N m or N: the largest change in one drive cycle
                                  (N m/s x drive_period), from the last command and from every
                                  command of the calls within one drive_period before (their dt
                                  summed); inf: none (laws) */
    double *last_command;      /* dof values: the last effort written; at first what native_law
                                  was given (last_command=; else 0, a drive that had none, as the
                                  node starts); the rate limit starts from it. NaN: no limit on
                                  the next call. Write it when you send a command of your own (a
                                  safe one after a status < 0); robodyn_law_continue at a swap. */
    int64_t compensates;       /* what the drive adds itself: 1 gravity (taken off), 2 friction
                                  (the law leaves it out) */
    const int64_t *table;      /* private: the step's own addresses and settings */
};

static inline int32_t robodyn_law_step(robodyn_law *law, const double *q, const double *qd,
                                       const double *q_ref, const double *qd_ref,
                                       const double *qdd_ref, double dt, double *effort)
{
    return law->step.law(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort);
}

static inline int32_t robodyn_observer_step(robodyn_law *law, const double *q, const double *qd,
                                            const double *tau, double dt, double *residual)
{
    return law->step.observer(law, q, qd, tau, dt, residual);
}

static inline int32_t robodyn_observer_reset(robodyn_law *law, const double *q, const double *qd)
{
    return law->reset(law, q, qd);
}

/* A law swap in the real-time thread: `next` (built for the same arm) takes over `previous`'s
 * last command, so that its first command is rate-limited from what the drive holds, not from
 * what `next` was seeded with when it was built (the old law commanded on since). Call it once,
 * before next's first step. ROBODYN_BAD_INPUT, nothing copied, for two arms or an observer. */
static inline int32_t robodyn_law_continue(robodyn_law *next, const robodyn_law *previous)
{
    if (next->kind != ROBODYN_KIND_LAW || previous->kind != ROBODYN_KIND_LAW
        || next->dof != previous->dof)
        return ROBODYN_BAD_INPUT;
    for (int64_t i = 0; i < next->dof; i++)
        next->last_command[i] = previous->last_command[i];
    return ROBODYN_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* ROBODYN_LAW_H */
