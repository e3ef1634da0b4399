"""Simulation of the forward dynamics: fixed-step RK4 (001 §7) and adaptive Dormand–Prince 5(4).

The joint forces are a zero-order hold over each step (as a sampled controller applies them), or a
function ``tau(t, q, qd)`` for the adaptive integrator.
"""
import numpy as np


def rk4_step(model, q, qd, tau, dt, tip_wrench=None):
    """One classical Runge–Kutta step of x = (q, qd) with tau held constant; returns (q, qd)."""
    def f(qi, qdi):
        return qdi, model.forward_dynamics(qi, qdi, tau, tip_wrench=tip_wrench)

    k1q, k1v = f(q, qd)
    k2q, k2v = f(q + 0.5 * dt * k1q, qd + 0.5 * dt * k1v)
    k3q, k3v = f(q + 0.5 * dt * k2q, qd + 0.5 * dt * k2v)
    k4q, k4v = f(q + dt * k3q, qd + dt * k3v)
    return (q + dt / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q),
            qd + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v))


def simulate(model, q0, qd0, tau, duration, dt):
    """Fixed-step RK4 from (q0, qd0); ``tau(t, q, qd)`` is sampled at the start of every step.
    Returns times (N+1,), q (N+1, n), qd (N+1, n)."""
    steps = int(round(duration / dt))
    t = np.arange(steps + 1) * dt
    q = np.empty((steps + 1, model.dof))
    qd = np.empty_like(q)
    q[0], qd[0] = q0, qd0
    for k in range(steps):
        q[k + 1], qd[k + 1] = rk4_step(model, q[k], qd[k], tau(t[k], q[k], qd[k]), dt)
    return t, q, qd


# Dormand–Prince 5(4) tableau
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = [[],
      [1 / 5],
      [3 / 40, 9 / 40],
      [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
      [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_B5 = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
_B4 = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])


def simulate_adaptive(model, q0, qd0, tau, duration, rtol=1e-8, atol=1e-10, first_step=1e-3,
                      max_steps=1_000_000):
    """Adaptive Dormand–Prince 5(4) with error control on (q, qd); ``tau(t, q, qd)`` continuous.
    Returns the accepted times, q and qd."""
    n = model.dof
    x = np.concatenate([np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)])

    def f(t, x):
        q, qd = x[:n], x[n:]
        return np.concatenate([qd, model.forward_dynamics(q, qd, tau(t, q, qd))])

    t, h = 0.0, first_step
    ts, xs = [t], [x]
    k = np.empty((7, 2 * n))
    k[0] = f(t, x)
    for _ in range(max_steps):
        if t >= duration:
            break
        h = min(h, duration - t)
        for s in range(1, 7):
            k[s] = f(t + _C[s] * h, x + h * (np.asarray(_A[s]) @ k[:s]))
        x5 = x + h * (_B5 @ k)
        err = h * ((_B5 - _B4) @ k)
        scale = atol + rtol * np.maximum(np.abs(x), np.abs(x5))
        ratio = np.sqrt(np.mean((err / scale) ** 2))
        if ratio <= 1.0:
            t, x = t + h, x5
            ts.append(t)
            xs.append(x)
            k[0] = k[6]   # first same as last
        h *= min(5.0, max(0.2, 0.9 * ratio ** -0.2)) if ratio > 0.0 else 5.0
    else:
        raise RuntimeError(f"adaptive integration did not reach t = {duration} in {max_steps} steps")
    xs = np.array(xs)
    return np.array(ts), xs[:, :n], xs[:, n:]
