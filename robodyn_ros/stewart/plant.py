"""A simulated platform without ROS: the state integrated by forward dynamics (forward.integrate,
RK4) under held actuator forces, what its leg sensors measure, and the model mismatches a
controller should be tried against.

A drive cannot push beyond its limit: forces beyond the platform's actuator limit are clamped (and
counted), as a drive saturates. A step that fails (a singular pose, a non-finite state) changes
nothing: the state is held and the failure is the caller's to report (StepError).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..spatial import rotations
from .forward import SingularPoseError, integrate
from .model import StewartPlatform


class StepError(RuntimeError):
    """A step that gave no physical state; the plant keeps the state it had."""


def with_payload(sp: StewartPlatform, mass: float, com) -> StewartPlatform:
    """The platform carrying a point mass ``mass`` (kg) at ``com`` (platform frame): new mass,
    centre of mass and inertia about it (parallel-axis theorem)."""
    if mass == 0.0:
        return sp
    if not mass > 0.0:
        raise ValueError(f"payload mass {mass!r} kg must be >= 0")
    com = np.asarray(com, dtype=float)
    total = sp.M + mass
    c = (sp.M * sp.R0 + mass * com) / total

    def shift(m, d):
        return m * (d @ d * np.eye(3) - np.outer(d, d))

    inertia = sp.I_p + shift(sp.M, sp.R0 - c) + shift(mass, com - c)
    return dataclasses.replace(sp, M=total, R0=c, I_p=inertia)


class SimulatedPlatform:
    """Pose (position, rotation) and twist of the platform's reference point, base frame; ``step``
    advances them by ``dt`` seconds in ``substeps`` RK4 steps with the forces held."""

    def __init__(self, sp: StewartPlatform, position, rotation, dt: float, substeps: int = 1,
                 force_limit: float | None = None, seed: int = 0,
                 noise: tuple[float, float] = (0.0, 0.0)):
        self.sp, self.dt, self.substeps = sp, dt, substeps
        self.force_limit = force_limit if force_limit is not None else sp.force_limit
        self.initial = (np.array(position, float), np.array(rotation, float))
        self.reset()
        self.noise = noise   # standard deviations of the measured lengths (m) and rates (m/s)
        self.rng = np.random.default_rng(seed)
        self.clamped = 0     # steps whose forces were clamped at the limit

    def reset(self):
        """Back at the initial pose, at rest."""
        self.position, self.rotation = (a.copy() for a in self.initial)
        self.linear_velocity, self.angular_velocity = np.zeros(3), np.zeros(3)

    def applied(self, forces) -> np.ndarray:
        """The forces a step applies for the command ``forces``."""
        forces = np.asarray(forces, dtype=float)
        return forces if not self.force_limit else np.clip(forces, -self.force_limit,
                                                           self.force_limit)

    def step(self, forces) -> None:
        """Advance by dt with ``forces`` (N, legs 1..6) held; StepError leaves the state as it
        was."""
        applied = self.applied(forces)
        if not np.array_equal(applied, forces):
            self.clamped += 1
        state = (self.position, self.rotation, self.linear_velocity, self.angular_velocity)
        try:
            motion = integrate(self.sp, *state, applied, self.dt, self.dt / self.substeps)
        except (SingularPoseError, ValueError, np.linalg.LinAlgError) as exc:
            raise StepError(str(exc)) from None
        last = (motion.position[-1], motion.rotation[-1], motion.linear_velocity[-1],
                motion.angular_velocity[-1])
        if not all(np.all(np.isfinite(x)) for x in last):
            raise StepError("the step gave a non-finite state")
        self.position, self.rotation, self.linear_velocity, self.angular_velocity = last

    def legs(self):
        """(lengths, rates) of the six legs, exact."""
        ik = self.sp.inverse_kinematics(self.position, self.rotation, self.linear_velocity,
                                        self.angular_velocity)
        return ik.lengths, ik.rates

    def measured_legs(self):
        """(lengths, rates) as the leg sensors give them: with the seeded Gaussian noise."""
        lengths, rates = self.legs()
        if self.noise[0]:
            lengths = lengths + self.rng.normal(0.0, self.noise[0], 6)
        if self.noise[1]:
            rates = rates + self.rng.normal(0.0, self.noise[1], 6)
        return lengths, rates

    @property
    def quaternion(self):
        return rotations.matrix_quaternion(self.rotation)
