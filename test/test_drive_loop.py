"""The control loop behind a drive that adds gravity (and friction) itself and limits the torque
rate, without ROS: the PUMA 560 on our RK4 engine at 1 kHz behind ``sim.drive.TorqueDrive`` (its
model: the arm's, or the masses x1.05), with a fake clock. Gravity is counted once, no command
path exceeds effort_rate_limit, and the momentum observer is silent on the drive's free motion."""
import warnings

import numpy as np
import pytest

from robodyn_ros.control import JointTrajectory
from robodyn_ros.control.drive import DRIVE_FRICTION, DRIVE_GRAVITY
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.law import load_law
from robodyn_ros.control.loop import Accepted, ControlLoop, LawFailure, Rejection
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler
from robodyn_ros.plumbing.resources import find_share_file
from robodyn_ros.sim.drive import attach_drive
from robodyn_ros.sim.robodyn_engine import RobodynEngine
from test_control_loop import NanLaw

from drive_cycles import worst_steps

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the PUMA data's link 3 inertia warns, rightly
    PUMA = RobotModel.from_urdf(str(find_share_file("urdf/puma560.urdf")))
CHAIN = list(PUMA.joint_names)
ORDER = CHAIN[::-1]
Q0 = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
DT = 1e-3
RATE = 1000.0   # N m/s: a Franka's kMaxTorqueRate
LAW = {"control_law": "computed_torque", "kp": 100.0, "kd": 20.0}
PUSH = np.array([0.0, 0.0, -40.0, 0.0, 0.0, 0.0])
ZERO = np.zeros(6)


def laws(name):
    return NanLaw if name == "nan_test" else load_law(name)


class Rig:
    """The loop and the arm behind its drive; ``run(seconds)`` closes the loop at 1 kHz and
    records every command sent with the time the loop sent it."""

    def __init__(self, compensates=DRIVE_GRAVITY, drive_rate=np.inf, mass_scale=1.0, model=PUMA,
                 **settings):
        self.t = 100.0
        self.loop = ControlLoop(model, JointOrder(CHAIN, ORDER), {**LAW, **settings}, 0.1,
                                clock=lambda: self.t, steady=lambda: self.t, law_class=laws,
                                links=[f"link_{i + 1}" for i in range(6)])
        self.engine = RobodynEngine(model, DT)
        self.drive = attach_drive(self.engine, compensates, np.full(6, drive_rate),
                                  mass_scale=mass_scale)
        self.q, self.qd = Q0.copy(), np.zeros(6)
        self.events = []
        self.loop.on_collision = self.events.append
        self.sent = []     # (time, command in joints order) of every command
        self.command = np.zeros(6)   # chain order, what the drive holds

    def send(self, command):
        self.sent.append((self.t, command.effort.copy()))
        self.command = np.asarray(command.effort)[::-1].copy()   # joints order is reversed

    def run(self, seconds, wrench=None):
        for _ in range(round(seconds / DT)):
            measured = self.engine.joint_torque(self.command, self.q, self.qd)
            self.loop.set_state(ORDER, self.q[::-1], self.qd[::-1], stamp=self.t,
                                effort=measured[::-1])
            self.send(self.loop.cycle())
            self.q, self.qd = self.engine.step(self.q, self.qd, self.command, wrench)
            self.t += DT

    def worst_step(self):
        """The largest change a 1 ms drive applies in one cycle (drive_cycles.worst_steps)."""
        times, efforts = zip(*self.sent)
        return float(worst_steps(times, efforts, DT)[0].max())


def test_the_command_is_the_law_s_less_g_on_a_static_arm():
    """Gravity counted once: at rest, the command to a drive that adds gravity is the law's less
    g(q) (Lagrange–Euler's), and with friction compensation its friction at q̇ too."""
    q, qd = Q0 + 0.2, np.array([0.3, -0.2, 0.1, 0.0, 0.5, -0.4])
    g = lagrange_euler(PUMA, q, ZERO, ZERO, friction=False)
    friction = lagrange_euler(PUMA, q, qd, ZERO) - lagrange_euler(PUMA, q, qd, ZERO, friction=False)
    for compensates, velocity, taken in ((["gravity"], ZERO, g),
                                         (["gravity", "friction"], qd, g + friction)):
        plain, behind = (ControlLoop(PUMA, JointOrder(CHAIN, ORDER), {**LAW, **config}, 0.1,
                                     clock=lambda: 100.0) for config in
                         ({}, {"drive_compensates": compensates}))
        for loop in (plain, behind):
            loop.set_state(ORDER, q[::-1], velocity[::-1], stamp=100.0)
            loop.set_reference((q + 0.01)[::-1])
        law, command = plain.cycle().effort.copy(), behind.cycle().effort.copy()
        np.testing.assert_allclose(law - command, taken[::-1], rtol=1e-9, atol=1e-9)
        # a trajectory's sampled reference: the law's compiled short path, then the stage
        for loop in (plain, behind):
            loop.set_trajectory(JointTrajectory(ORDER, np.array([1.0]), (q - 0.02)[::-1][None]))
        law, command = plain.cycle().effort.copy(), behind.cycle().effort.copy()
        np.testing.assert_allclose(law - command, taken[::-1], rtol=1e-9, atol=1e-9)
        if velocity is ZERO:   # holding the static arm: the drive's g(q) is all it needs
            behind.set_reference(q[::-1])
            np.testing.assert_allclose(behind.cycle().effort, 0.0, atol=1e-9)


def test_behind_the_drive_the_arm_holds_still_and_without_the_parameter_it_rises():
    """The drive adds its g(q): with drive_compensates the hold is still; without it gravity
    counts twice and the arm is pushed up with its own weight."""
    once, twice = Rig(drive_compensates=["gravity"]), Rig()
    for rig in (once, twice):
        rig.run(0.5)
    assert np.max(np.abs(once.q - Q0)) < 1e-6
    assert np.max(np.abs(twice.q - Q0)) > 0.05


def test_the_safe_commands_hold_with_what_the_drive_does_not_add():
    rig = Rig(drive_compensates=["gravity"])
    rig.run(0.05)
    deactivate = rig.loop.deactivate("hold_gravity")
    np.testing.assert_allclose(deactivate.effort, 0.0, atol=1e-9)   # the drive holds it all
    assert rig.loop.ramp_due() is None   # reached at once: nothing left to ramp
    rig.t += 0.2
    stale = rig.loop.watchdog()
    np.testing.assert_allclose(stale.effort, 0.0, atol=1e-9)


def test_a_stale_hold_takes_off_the_drive_s_gravity_not_its_friction_at_an_old_velocity():
    """hold_gravity behind a drive adding both is zero: the last state's velocity is no more (the
    arm may have stopped), and taking its friction off would push against a motion long over."""
    t = [100.0]
    loop = ControlLoop(PUMA, JointOrder(CHAIN, ORDER), {**LAW, "drive_compensates":
                                                        ["gravity", "friction"]}, 0.1,
                       clock=lambda: t[0], steady=lambda: t[0])
    qd = np.array([0.5, -0.4, 0.3, 0.2, -0.1, 0.6])
    assert np.abs(PUMA.friction_torques(qd)).max() > 0.1   # there is friction to leave alone
    loop.set_state(ORDER, Q0[::-1], qd[::-1], stamp=t[0])
    loop.cycle()
    t[0] += 0.2
    np.testing.assert_allclose(loop.watchdog().effort, 0.0, atol=1e-9)


def test_no_command_path_exceeds_the_rate_limit():
    """References, a goal and its preemption, a law switch, a hold, a collision's reflex, a law
    failure, the watchdog and the deactivation ramp: no command changes by more than
    effort_rate_limit x drive_period (1 N m) in a drive cycle (the drive counts none over its
    1000 N m/s); the same run without the limit is over it. (Every edge of timing, apart:
    test_drive_cycles.py.)"""
    def scenario(rig):
        far = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])
        rig.run(0.05)
        assert isinstance(rig.loop.set_reference(far[::-1]), Accepted)   # a step
        rig.run(0.1)
        goal = JointTrajectory(CHAIN, np.array([1.0]), far[None], ZERO[None], ZERO[None])
        rig.loop.set_trajectory(JointTrajectory(CHAIN, np.array([0.5]), Q0[None], ZERO[None],
                                                ZERO[None]))
        rig.run(0.2)
        rig.loop.set_trajectory(goal)   # preempts the first
        rig.run(0.2)
        rig.loop.apply(rig.loop.prepare({"control_law": "pd_gravity", "kp": 800.0, "kd": 40.0}))
        rig.run(0.1)
        rig.loop.hold()
        rig.run(0.1)
        rig.loop.apply(rig.loop.prepare({"control_law": "nan_test"}))
        rig.run(0.02)
        assert isinstance(rig.loop.cycle(), LawFailure)
        rig.loop.apply(rig.loop.prepare(LAW))
        rig.loop.hold()
        rig.run(0.1)
        assert not rig.events
        rig.run(0.1, 5 * PUSH)   # detected: the reflex
        assert rig.events
        rig.loop.reset_collision()
        rig.run(0.1)
        for _ in range(20):   # no state: the watchdog's commands every 10 ms
            rig.t += 0.01
            stale = rig.loop.watchdog()
            if stale is not None:
                rig.send(stale)
        rig.send(rig.loop.deactivate("zero"))   # the deactivation, one step a drive period
        while rig.loop.ramp_due() is not None:
            rig.t += DT
            rig.send(rig.loop.ramp())

    collision = {"collision_observer_gain": [50.0], "collision_thresholds": [20.0],
                 "collision_thresholds_per_velocity": [0.0], "collision_reaction": "reflex",
                 "collision_reflex_gain": 3.0, "collision_torque": "measured",
                 "drive_compensates": ["gravity"]}
    limited = Rig(drive_rate=RATE, effort_rate_limit=[RATE], **collision)
    scenario(limited)
    assert limited.drive.violations == 0
    assert limited.worst_step() <= RATE * DT * (1.0 + 1e-9)
    assert limited.loop.rate_limits.count > 0
    values = limited.loop.report()[2]
    assert values["rate limits (total)"] == limited.loop.rate_limits.count
    np.testing.assert_allclose(limited.sent[-1][1], 0.0)   # the ramp reached its target
    free = Rig(drive_rate=RATE, **collision)
    scenario(free)
    assert free.drive.violations > 0 and free.worst_step() > 10 * RATE * DT


@pytest.mark.parametrize("torque, mass_scale", [("command", 1.0), ("measured", 1.05)])
def test_the_observer_is_silent_on_the_drive_s_free_motion_and_finds_a_push(torque, mass_scale):
    """The observer's applied torque is the command plus what the drive adds (our model's, or the
    measured effort when the drive's model is not ours): 004's motion raises no alarm, a push on
    the tip still does. Friction off, as in the collision tests: a Coulomb step between two
    states is no model error of the drive's."""
    settings = {"collision_observer_gain": [50.0], "collision_thresholds": [2.0],
                "collision_thresholds_per_velocity": [0.0], "collision_reaction": "none",
                "collision_torque": torque, "drive_compensates": ["gravity"],
                "effort_rate_limit": [RATE]}
    rig = Rig(drive_rate=RATE, mass_scale=mass_scale, model=PUMA.scaled(friction=0.0), **settings)
    rig.run(0.05)
    goal = JointTrajectory(CHAIN, np.array([3.0]), np.radians([[45.0, 30.0, 0.0, 45.0, 60.0, 90.0]]),
                           ZERO[None], ZERO[None])
    assert not isinstance(rig.loop.set_trajectory(goal), Rejection)
    rig.run(3.2)
    assert rig.events == [] and rig.drive.violations == 0
    rig.run(0.05, PUSH)
    assert rig.events


@pytest.mark.parametrize("name, compensates, rate", [
    ("franka_controller.yaml", ["gravity", "friction"], 1000.0),
    ("ur_direct_torque_controller.yaml", ["gravity", "friction"], 1000.0)])
def test_the_driver_files_pass_the_schema_and_say_what_the_drive_adds(name, compensates, rate):
    """Every parameter of each per-driver file is the controller's and passes its checks; the
    Franka file configures a loop on the Panda that takes off both and limits the rate."""
    import yaml

    from robodyn_ros.nodes.controller import schema
    values = yaml.safe_load((find_share_file(f"config/{name}")).read_text())
    values = values["computed_torque_controller"]["ros__parameters"]
    specs = {s.name: s for s in schema()}
    for key, value in values.items():
        specs[key].check(value)
    assert values["drive_compensates"] == compensates
    assert values["effort_rate_limit"] == ([] if np.isinf(rate) else [rate])
    if name.startswith("franka"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            panda = RobotModel.from_urdf(str(find_share_file("urdf/panda.urdf")))
        keys = {"control_law", "kp", "kd", "friction", "effort_limits", "on_timeout",
                "drive_compensates", "drive_period", "effort_rate_limit", "collision_torque"}
        loop = ControlLoop(panda, JointOrder(list(panda.joint_names)),
                           {k: values[k] for k in keys}, values["state_timeout"],
                           clock=lambda: 1.0)
        drive = loop._stage.drive
        assert drive.compensates == DRIVE_GRAVITY | DRIVE_FRICTION and drive.period == 1e-3
        assert np.all(drive.step(7) == rate * 1e-3)   # one N m a cycle: FCI's own limit


@pytest.mark.parametrize("law", ["gravity_compensation", "computed_torque"])
@pytest.mark.parametrize("friction", [True, False])
def test_friction_the_drive_compensates_does_not_chatter_at_rest(law, friction):
    """An identified model with 0.8 N m of Coulomb friction on every joint, at rest with 1e-3
    rad/s of velocity noise, behind a drive that compensates gravity and friction: the command
    carries none of the model's friction (the law's, smooth or not, is not added and so not
    taken off): it is the same model's without friction, to the bit, not ±0.8 N m off from cycle
    to cycle, whatever the law's friction."""
    import dataclasses

    from robodyn_ros.dynamics.model import RobotModel as Model

    def loop_of(coulomb):
        model = Model([dataclasses.replace(link, coulomb_positive=coulomb,
                                           coulomb_negative=coulomb, viscous=0.0)
                       for link in PUMA.links], PUMA.tip, PUMA.gravity, PUMA.name, PUMA.frames)
        return ControlLoop(model, JointOrder(CHAIN, ORDER),
                           {**LAW, "control_law": law, "friction": friction,
                            "drive_compensates": ["gravity", "friction"]}, 0.1,
                           clock=lambda: t[0], steady=lambda: t[0], law_class=laws)
    t = [100.0]
    identified, frictionless = loop_of(0.8), loop_of(0.0)
    rng = np.random.default_rng(5)
    for _ in range(200):
        qd = rng.normal(0.0, 1e-3, 6)
        commands = []
        for loop in (identified, frictionless):
            loop.set_state(ORDER, Q0[::-1], qd, stamp=t[0])
            commands.append(loop.cycle().effort.copy())
        np.testing.assert_array_equal(commands[0], commands[1])
        t[0] += DT
