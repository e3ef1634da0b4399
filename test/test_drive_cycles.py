"""What a drive receives from the control loop at the edges of timing, without ROS: the PUMA 560 on
our RK4 engine behind ``sim.drive.TorqueDrive`` (it adds gravity and flags a command changing
faster than 1000 N m/s), stepped at the drive's own 1 ms cycle with the command it holds, on a
fake clock in ticks of 0.1 ms. Joint states arrive on their own schedule (stalls, bursts,
jitter, a slow rate), the watchdog's thread is run as ``nodes/watchdog.py`` runs it (its sleeps
on the loop's ``stale_in`` and ``ramp_due``), and every command sent is recorded: no command
path changes the command by more than rate x period in any one drive cycle (between consecutive
commands and across every command sent within one period: ``drive_cycles.worst_steps``), and the
drive counts no violation at any phase."""
import numpy as np
import pytest

from robodyn_ros.control import JointTrajectory
from robodyn_ros.control.drive import DRIVE_GRAVITY
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.loop import Accepted, ControlLoop
from robodyn_ros.nodes.watchdog import LATE
from robodyn_ros.sim.drive import attach_drive
from robodyn_ros.sim.robodyn_engine import RobodynEngine

from drive_cycles import worst_steps
from test_drive_loop import CHAIN, ORDER, PUMA, Q0

FAR = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])
ZERO = np.zeros(6)
TICK = 1e-4        # s: the fake clock's resolution
PERIOD = 1e-3      # s: the drive's cycle, 10 ticks
RATE = 1000.0      # N m/s: a Franka's kMaxTorqueRate, one N m per cycle
STEP = RATE * PERIOD
TIMEOUT = 0.1
LAW = {"control_law": "computed_torque", "kp": 100.0, "kd": 20.0, "friction": False,
       "drive_compensates": ["gravity"], "drive_period": PERIOD, "effort_rate_limit": [RATE]}
COLLISION = {"collision_observer_gain": [50.0], "collision_thresholds": [20.0],
             "collision_thresholds_per_velocity": [0.0], "collision_reaction": "reflex",
             "collision_reflex_gain": 3.0, "collision_torque": "measured"}
PUSH = np.array([0.0, 0.0, -200.0, 0.0, 0.0, 0.0])


class Rig:
    """The loop, the arm behind its drive and the watchdog's thread on one fake clock in ticks."""

    def __init__(self, drive_phase=3, adds_gravity=True, seed=True, **settings):
        self.tick = 1_000_000
        self.seed = seed   # a loop configured again starts from what the drive holds
        self.config = {**LAW, "drive_compensates": ["gravity"] if adds_gravity else [], **settings}
        self.loop = self._loop(self.config)
        self.engine = RobodynEngine(PUMA, PERIOD)
        self.drive = attach_drive(self.engine, DRIVE_GRAVITY if adds_gravity else 0,
                                  np.full(6, RATE))
        self.drive_phase = drive_phase
        self.q, self.qd = Q0.copy(), np.zeros(6)
        self.held = np.zeros(6)    # chain order: the command the drive holds
        self.sent = []             # (time, command in joints order) of every command
        self.active = True         # the node's: the watchdog commands only then
        self.wrench = None
        self.wake = None           # when the watchdog's thread wakes next
        self.events = []

    def _loop(self, config, **kwargs):
        kwargs.setdefault("clock", self.now)
        loop = ControlLoop(PUMA, JointOrder(CHAIN, ORDER), config, TIMEOUT, steady=self.now,
                           links=[f"link_{i + 1}" for i in range(6)], **kwargs)
        loop.on_collision = lambda event: self.events.append(event)
        loop.on_ramp = self.wake_watchdog
        return loop

    def wake_watchdog(self):
        """The watchdog's thread, woken (nodes/watchdog.py: the loop's on_ramp)."""
        self.wake = self.now()

    def now(self):
        return self.tick * TICK

    def send(self, command):
        if command is not None:
            self.sent.append((self.now(), command.effort.copy()))
            self.held = np.asarray(command.effort)[::-1].copy()   # joints order is reversed

    def state(self, stamp=None):
        """A joint state of the arm now (stamped ``stamp``), taken and answered."""
        measured = self.engine.joint_torque(self.held, self.q, self.qd)
        result = self.loop.set_state(ORDER, self.q[::-1], self.qd[::-1],
                                     stamp=self.now() if stamp is None else stamp,
                                     effort=measured[::-1])
        if isinstance(result, Accepted) and self.active:
            self.send(self.loop.cycle())

    def watchdog(self):
        """One wake of nodes/watchdog.py's thread (its sleeps are the schedule)."""
        loop, period = self.loop, max(TIMEOUT / 10.0, 1e-3)
        command = loop.watchdog() if self.active else None
        stale = command is not None
        if not stale and self.active:
            command = loop.ramp()
        self.send(command)
        left, due = loop.stale_in(), loop.ramp_due() if self.active else None
        wait = period if stale or left is None else max(left, 0.0) + LATE
        if due is not None:
            wait = min(wait, max(due, 0.0))
        self.wake = self.now() + max(wait, TICK)

    def run(self, seconds, states_every=10, jitter=0, stalled=False, rng=None):
        """``seconds`` of ticks: a state every ``states_every`` ticks (± ``jitter``), none while
        ``stalled``; the drive's cycle every 10 ticks; the watchdog when it wakes."""
        next_state = self.tick + 1
        for _ in range(round(seconds / TICK)):
            self.advance()
            if not stalled and self.tick >= next_state:
                self.state()
                offset = 0 if not jitter else int(rng.integers(-jitter, jitter + 1))
                next_state = self.tick + states_every + offset
            if self.wake is None or self.now() >= self.wake - 1e-12:
                self.watchdog()

    def deactivate(self, kind):
        """As the node deactivates: no cycle from now, the first command toward ``kind``, then
        its ramp, each step when due (nodes/controller.py's deactivate)."""
        self.active = False
        self.send(self.loop.deactivate(kind))
        while self.loop.ramp_due() is not None:
            while self.loop.ramp_due() > 1e-12:
                self.advance()
            self.send(self.loop.ramp())

    def advance(self):
        """One tick of nothing but the drive's cycle."""
        self.tick += 1
        if (self.tick - self.drive_phase) % 10 == 0:
            self.q, self.qd = self.engine.step(self.q, self.qd, self.held, self.wrench)

    def worst(self):
        """The largest change the drive may apply in one cycle (any phase), and between
        consecutive commands, over all joints."""
        times, efforts = zip(*self.sent)
        cycle, consecutive = worst_steps(times, efforts, PERIOD)
        return float(cycle.max()), float(consecutive.max())

    def goal(self, q, duration):
        if self.loop.received is None:
            self.run(0.05)
        zero = ZERO[None]
        return self.loop.set_trajectory(JointTrajectory(CHAIN, np.array([duration]), q[None],
                                                        zero, zero))


def stall(rig):
    """300 ms without states in the middle of a goal: the watchdog's hold_gravity, the resume."""
    rig.goal(FAR, 0.6)
    rig.run(0.3)
    rig.run(0.3, stalled=True)
    rig.run(0.2)
    assert rig.loop.rate_limits.count > 0


def burst(rig):
    """60 ms without states (not stale), then the 60 missed ones in a burst within 0.6 ms."""
    rig.goal(FAR, 1.0)
    rig.run(0.3)
    start = rig.now()
    rig.run(0.06, stalled=True)
    for k in range(60):
        rig.tick += 1 if k % 10 == 9 else 0
        rig.state(stamp=start + k * PERIOD)
    rig.run(0.2)


def jitter(rig):
    """States at 1 kHz ± 0.5 ms along a fast goal: two commands within one drive cycle."""
    rig.goal(FAR, 0.6)
    rig.run(0.8, jitter=5, rng=np.random.default_rng(1))
    assert rig.loop.rate_limits.count > 0


def deactivate_activate(rig):
    """on_deactivate zero (a ramp, one step a drive period), 0.5 s inactive, activate."""
    rig.run(0.2)
    rig.deactivate("zero")
    assert np.abs(rig.sent[-1][1]).max() == 0.0
    rig.run(0.5)
    rig.active = True
    rig.loop.activate()
    rig.run(0.3)
    assert np.abs(rig.sent[-1][1]).max() > 10.0   # back to g(q)


def law_switch(rig):
    rig.goal(FAR, 1.0)
    rig.run(0.3)
    rig.loop.apply(rig.loop.prepare({"control_law": "pd_gravity", "kp": 800.0, "kd": 40.0}))
    rig.run(0.2)


def preemption(rig):
    rig.goal(FAR, 1.0)
    rig.run(0.4)
    rig.goal(Q0 - 0.3, 0.3)
    rig.run(0.5)


def hold(rig):
    rig.goal(FAR, 0.8)
    rig.run(0.4)
    rig.loop.hold()
    rig.run(0.3)


def collision(rig):
    """A reflex and its end: a push on the elbow, then the reset."""
    rig.run(0.1)
    rig.wrench = PUSH
    rig.run(0.1)
    assert rig.events
    rig.wrench = None
    rig.run(0.1)
    rig.loop.reset_collision()
    rig.run(0.2)


def lowered_limits(rig):
    """effort_limits lowered to half the shoulder's torque while states arrive at 100 Hz: reached by
    a ramp one step a drive period, not one step a state."""
    rig.run(0.1)
    shoulder = abs(rig.sent[-1][1][-2])   # joint_2 (joints order is reversed)
    assert shoulder > 20.0
    limits = list(PUMA.effort_limit[::-1])
    limits[-2] = shoulder / 2
    rig.loop.apply(rig.loop.prepare({"effort_limits": limits}))
    changed = rig.now()
    rig.run(0.2, states_every=100)
    reached = next(t for t, u in rig.sent if t > changed and abs(u[-2]) <= limits[-2] + 1e-9)
    assert reached - changed <= (np.ceil(shoulder / 2) + 1) * PERIOD


def reconfigured(rig):
    """Configured again (a new loop, as the node's configure makes one) while the drive holds
    g(q): the new loop starts its rate limit from what the drive holds."""
    rig.run(0.1)
    held = rig.sent[-1][1].copy()
    rig.loop = rig._loop(rig.config, drive_holds=held if rig.seed else None)
    rig.loop.activate()
    rig.run(0.2)


PLAIN = {"adds_gravity": False}   # a plain effort drive: g(q) is in every command
UNLIMITED = {"effort_rate_limit": []}
#: each edge, the rig it needs, and the rig on which the same edge breaks the bound
SCENARIOS = [(stall, {}, UNLIMITED), (burst, {}, UNLIMITED), (jitter, {}, UNLIMITED),
             (deactivate_activate, PLAIN, UNLIMITED), (law_switch, {}, UNLIMITED),
             (preemption, {}, UNLIMITED), (hold, {}, UNLIMITED), (collision, COLLISION, UNLIMITED),
             (lowered_limits, PLAIN, UNLIMITED), (reconfigured, PLAIN, {"seed": False})]


@pytest.mark.parametrize("scenario, settings, breaking", SCENARIOS,
                         ids=[s.__name__ for s, _, _ in SCENARIOS])
def test_no_drive_cycle_changes_the_command_by_more_than_rate_times_period(scenario, settings,
                                                                          breaking):
    limited = Rig(**settings)
    scenario(limited)
    cycle, consecutive = limited.worst()
    print(f"{scenario.__name__}: worst per drive cycle {cycle:.3f} N m, consecutive "
          f"{consecutive:.3f} N m ({len(limited.sent)} commands)")
    assert cycle <= STEP * (1 + 1e-9) and consecutive <= cycle
    assert limited.drive.violations == 0
    # the same edge without the rate limit (or the seed) steps beyond it: the scenario is one
    broken = Rig(**{**settings, **breaking})
    _unchecked(scenario, broken)
    assert broken.worst()[0] > 1.5 * STEP


def _unchecked(scenario, rig):
    """The scenario without its own checks (which are about the limited run)."""
    try:
        scenario(rig)
    except (AssertionError, StopIteration):
        pass


@pytest.mark.parametrize("phase", [0, 5, 9])
def test_a_ramp_runs_at_the_drive_s_period_while_no_state_arrives(phase):
    """The watchdog's hold after a stall: |Δ| N m reached in |Δ| drive cycles (one step each),
    not one step per watchdog period (10 ms): the ramp goes at the drive's period."""
    rig = Rig(drive_phase=phase)
    rig.loop.apply(rig.loop.prepare({"on_timeout": "zero"}))
    rig.goal(FAR, 0.5)
    rig.run(0.25)
    last = np.abs(rig.sent[-1][1]).max()
    assert last > 20.0
    stalled = rig.now()
    rig.run(0.3, stalled=True)
    zero_at = next(t for t, u in rig.sent if t > stalled and np.abs(u).max() < 1e-9)
    # stale after TIMEOUT (+ the watchdog's lateness), then ceil(last) cycles of one N m
    assert zero_at - stalled <= TIMEOUT + (np.ceil(last) + 2) * PERIOD
    assert rig.worst()[0] <= STEP * (1 + 1e-9) and rig.drive.violations == 0


def test_nothing_is_sent_on_deactivation_before_any_state():
    """No measured state: hold_gravity has no q (g(0) is some other pose's), and the drive keeps
    what it has: nothing is published, nothing is due."""
    rig = Rig()
    for kind in ("hold_gravity", "zero"):
        assert rig.loop.deactivate(kind) is None
        assert rig.loop.ramp_due() is None and rig.loop.ramp() is None


class LateClock:
    """A simulated clock as the controller's cycle thread reads it: /clock is taken on another
    thread, each drive period's some 0-2 periods after the states of that time were answered."""

    def __init__(self, rig, seed=3):
        self.rig, self.rng, self.seen = rig, np.random.default_rng(seed), 0.0

    def __call__(self):
        late = int(self.rng.integers(0, 3)) * PERIOD
        cycle = np.floor(round(self.rig.now() / PERIOD, 6)) * PERIOD   # /clock: a period's start
        self.seen = max(self.seen, cycle - late)
        return self.seen


@pytest.mark.parametrize("scenario", [jitter, preemption, hold],
                         ids=lambda s: s.__name__)
def test_a_clock_taken_late_moves_no_drive_cycle_by_more_than_rate_times_period(scenario):
    """A simulated clock read on the cycle's thread lags the states it answers (/clock taken on
    the executor's thread): a command answering a state is sent no earlier than that state's time
    (the stage's time is the clock, or the newest state's stamp where the clock lags it), so the
    watchdog's ramp steps never go out a cycle early between the cycles' commands. The drive's
    cycles are the states' times; every command is recorded at its true time."""
    rig = Rig()
    rig.loop = rig._loop(rig.config, clock=LateClock(rig))
    scenario(rig)
    cycle, consecutive = rig.worst()
    assert cycle <= STEP * (1 + 1e-9) and consecutive <= cycle
    assert rig.drive.violations == 0
