"""A stand-in for a Universal Robots arm that reports motor currents, for the identification tests.

MuJoCo is the plant and the truth: example-robot-data's UR5 as published is the nominal model,
and the arm MuJoCo simulates is that URDF with other masses, centres of mass and inertias
(``truth_urdf``), behind drives of our choosing:

* a drive gain per joint (torque constant × gear ratio, N m/A): the joint torque is the gain
  times the motor current, and what the driver reports in ``effort`` is the current, with white
  measurement noise (``NOISE``, A);
* rotor inertia (``ARMATURE``), viscous friction (MuJoCo's joint damping), and dry friction:
  MuJoCo's ``frictionloss`` (a constraint: it holds a joint at rest up to the stiction
  ``STICTION``) with a Stribeck fall to the Coulomb level ``COULOMB`` above a few hundredths of
  a rad/s, applied as a generalised force;
* the maker's controller at 500 Hz: PD on the tracking error plus a feed-forward from the maker's
  own model, which is the truth with known small errors (``MAKER_*``); its target current (that
  feed-forward over the maker's gains) is logged beside the measured one, as RTDE's
  ``target_current`` is.

The controller ticks at 2 ms; the driver publishes every tick (500 Hz) or about every fourth
(125 Hz), stamped with its receive time at 1 ms resolution (a latency of 0.1-1.9 ms), with a few
gaps of 10-34 ms. ``write_bag`` writes a run as a real rosbag2 (rosbags), the target current on
``TARGET_TOPIC`` as a JointState whose efforts are the currents.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from robodyn_ros.identification.bag import JOINT_STATE, write_joint_states
from robodyn_ros.identification.synthetic import fourier_motion
from vendor_robots import robots_directory

mujoco = pytest.importorskip("mujoco")

URDF = robots_directory() / "ur_description/urdf/ur5_robot.urdf"
ROOT, TIP = "base_link", "tool0"
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
          "wrist_2_joint", "wrist_3_joint")
START = np.array([0.2, -1.3, 1.5, -1.7, -1.4, 0.4])
TICK = 0.002                       # s: the controller's period (500 Hz), one RK4 step of MuJoCo
TARGET_TOPIC = "/rtde/target_current"

# the plant: per link of the URDF its mass scale and centre-of-mass shift (m), then the drives
LINKS = ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")
MASS_SCALE = np.array([1.10, 0.92, 1.08, 1.15, 0.90, 1.30])
COM_SHIFT = np.array([[0.010, -0.020, 0.005], [0.015, 0.010, -0.030], [-0.010, 0.020, 0.020],
                      [0.005, -0.010, 0.015], [-0.010, 0.010, -0.005], [0.005, 0.010, 0.015]])
GAINS = np.array([12.5, 13.4, 11.8, 9.6, 8.9, 9.3])          # N m/A, the stand-in's own
ARMATURE = np.array([0.30, 0.30, 0.15, 0.040, 0.040, 0.035])  # kg m²
VISCOUS = np.array([6.0, 5.0, 3.0, 1.2, 1.0, 0.8])            # N m s/rad
COULOMB = np.array([6.0, 7.0, 4.0, 1.5, 1.2, 1.0])            # N m
STICTION = 1.3 * COULOMB                                      # N m
STRIBECK = 0.02                                               # rad/s
NOISE = np.array([0.06, 0.06, 0.05, 0.03, 0.03, 0.03])        # A, white, on each current sample
# the payload of the second run: a 2.5 kg block off the flange's axis (tool0 frame)
PAYLOAD = (2.5, np.array([0.07, -0.05, 0.06]), np.diag([4e-3, 5e-3, 3e-3]))
# the maker's model: the plant with these errors (its target current is logged)
MAKER_MASS, MAKER_GAIN, MAKER_FRICTION = 1.03, np.array([1.01, 0.985, 1.02, 0.99, 1.015, 0.98]), 0.9
# the maker's PD on the tracking error (N m/rad, N m s/rad)
KP = np.array([3000.0, 3000.0, 1500.0, 300.0, 300.0, 300.0])
KD = np.array([200.0, 200.0, 100.0, 20.0, 20.0, 20.0])


def truth_urdf(mass_scale=MASS_SCALE, com_shift=COM_SHIFT):
    """The URDF text of the plant: the published UR5 with each link's mass and inertia scaled and
    its centre of mass moved."""
    tree = ET.parse(URDF)
    links = {link.get("name"): link for link in tree.getroot().iter("link")}
    for name, scale, shift in zip(LINKS, mass_scale, com_shift):
        inertial = links[name].find("inertial")
        mass = inertial.find("mass")
        mass.set("value", f"{float(mass.get('value')) * scale:.12g}")
        origin = inertial.find("origin")
        xyz = np.array(origin.get("xyz").split(), dtype=float) + shift
        origin.set("xyz", " ".join(f"{x:.12g}" for x in xyz))
        inertia = inertial.find("inertia")
        for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            inertia.set(key, f"{float(inertia.get(key)) * scale:.12g}")
    return ET.tostring(tree.getroot(), encoding="unicode")


def nominal_urdf():
    return URDF.read_text()


def compiled(urdf, payload=None, mass=1.0):
    """MjModel of ``urdf`` with the drives' armature and friction, ``payload`` (mass, com,
    inertia in the tip frame) as a body on the tip, masses and inertias times ``mass``."""
    spec = mujoco.MjSpec.from_string(urdf)
    spec.compiler.fusestatic = False
    for geom in list(spec.geoms):
        spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    for body in spec.bodies[1:]:
        body.mass *= mass
        body.inertia = np.asarray(body.inertia) * mass
    joints = {joint.name: joint for joint in spec.joints}
    for i, name in enumerate(JOINTS):
        joint = joints[name]
        joint.armature, joint.damping = ARMATURE[i], (VISCOUS[i], 0.0, 0.0)
        joint.frictionloss = STICTION[i]
        joint.solref_friction = (2.0 * TICK, 1.0)     # as stiff as the step allows: sticks at rest
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        motor = spec.add_actuator(name=f"{name}_motor", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        motor.gear = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if payload is not None:
        mass_, com, inertia = payload
        tip = next(body for body in spec.bodies if body.name == TIP)
        body = tip.add_body(name="payload")
        body.pos, body.ipos, body.mass = (0.0, 0.0, 0.0), tuple(com), mass_
        body.fullinertia = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2],
                            inertia[1, 2])
        body.explicitinertial = True
    spec.option.timestep = TICK
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m = spec.compile()
    assert [m.joint(j).name for j in range(m.njnt)] == list(JOINTS)
    return m


@dataclasses.dataclass(frozen=True)
class Run:
    """A run of the stand-in as its driver publishes it: ``stamps`` (s, 1 ms resolution) and at
    each the controller tick's state ``q``, ``qd``, the measured current ``current`` (with noise),
    its noise-free value ``true_current``, the maker's ``target_current``; ``tick_time`` the
    instant each state was taken."""
    stamps: np.ndarray
    tick_time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    current: np.ndarray
    true_current: np.ndarray
    target_current: np.ndarray
    payload: bool

    @property
    def noise(self):
        return self.current - self.true_current


def simulate(seconds=20.0, *, motion_seed=1, payload=False, rate=500.0, seed=0, rest=1.0,
             amplitude=0.25, gains=GAINS):
    """A run: ``rest`` s at START, the Fourier excitation of ``motion_seed`` for ``seconds``,
    ``rest`` s at rest again; published at ``rate`` (500 or 125 Hz) with the stamps, noise and gaps
    of ``seed``."""
    rng = np.random.default_rng(seed)
    plant = compiled(truth_urdf(), PAYLOAD if payload else None)
    maker = compiled(truth_urdf(), PAYLOAD if payload else None, mass=MAKER_MASS)
    data, maker_data = mujoco.MjData(plant), mujoco.MjData(maker)
    names = JOINTS
    _, qm, qdm, qddm = fourier_motion(_Named(names), START, seconds, 1.0 / TICK, motion_seed, amplitude)
    hold = int(round(rest / TICK))
    q_d = np.vstack([np.repeat(qm[:1], hold, 0), qm, np.repeat(qm[-1:], hold, 0)])
    qd_d = np.vstack([np.zeros((hold, 6)), qdm, np.zeros((hold, 6))])
    qdd_d = np.vstack([np.zeros((hold, 6)), qddm, np.zeros((hold, 6))])
    data.qpos[:] = START
    mujoco.mj_forward(plant, data)
    ticks = len(q_d)
    q, qd = np.empty((ticks, 6)), np.empty((ticks, 6))
    torque, feedforward = np.empty((ticks, 6)), np.empty((ticks, 6))
    for k in range(ticks):
        q[k], qd[k] = data.qpos, data.qvel
        feedforward[k] = _maker_torque(maker, maker_data, q_d[k], qd_d[k], qdd_d[k])
        torque[k] = feedforward[k] + KP * (q_d[k] - q[k]) + KD * (qd_d[k] - qd[k])
        data.ctrl[:] = torque[k]
        v = data.qvel
        # dry friction: frictionloss holds STICTION; above the Stribeck speed it falls to COULOMB
        data.qfrc_applied[:] = (STICTION - COULOMB) * (1.0 - np.exp(-(v / STRIBECK) ** 2)) * np.sign(v)
        mujoco.mj_step(plant, data)
    true_current = torque / gains
    target = feedforward / (gains * MAKER_GAIN)
    published, stamps = _published(ticks, rate, rng)
    current = true_current[published] + rng.normal(0.0, NOISE, (len(published), 6))
    return Run(stamps=stamps, tick_time=published * TICK, q=q[published], qd=qd[published],
               current=current, true_current=true_current[published], target_current=target[published],
               payload=payload)


class _Named:
    """What fourier_motion reads of a model: its joint names and count."""
    def __init__(self, names):
        self.joint_names, self.dof = list(names), len(names)


def _maker_torque(m, d, q, qd, qdd):
    """The maker's feed-forward at the reference: M q̈ + c(q, q̇) of its model (MuJoCo's RNE,
    rotor inertia added), its friction estimate (MAKER_FRICTION times the plant's)."""
    d.qpos[:], d.qvel[:] = q, qd
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    mujoco.mj_comVel(m, d)
    out = np.empty(6)
    d.qacc[:] = qdd
    mujoco.mj_rne(m, d, 1, out)
    return out + ARMATURE * qdd + MAKER_FRICTION * (VISCOUS * qd + COULOMB * np.sign(qd))


def _published(ticks, rate, rng, gaps=3):
    """(tick index, stamp s) of each message the driver publishes: every tick at 500 Hz; at 125 Hz
    the latest tick at each 8 ms ± 1 ms; stamped at receipt (0.1-1.9 ms later, floored to 1 ms);
    ``gaps`` stretches of 10-34 ms lost."""
    if rate >= 500.0:
        index = np.arange(ticks)
    else:
        period = 1.0 / rate
        wanted = np.arange(0.0, (ticks - 1) * TICK, period)
        wanted += rng.uniform(-1e-3, 1e-3, len(wanted))
        index = np.unique(np.clip(np.floor(wanted / TICK).astype(int), 0, ticks - 1))
    keep = np.ones(len(index), bool)
    for start in rng.choice(np.arange(len(index) // 10, len(index) * 9 // 10), gaps, replace=False):
        lost = int(rng.uniform(0.010, 0.034) / (TICK * max(1.0, 500.0 / rate)))
        keep[start:start + max(lost, 1)] = False
    index = index[keep]
    stamps = np.floor((index * TICK + rng.uniform(1e-4, 1.9e-3, len(index))) * 1e3 + 1e-9) / 1e3
    assert np.all(np.diff(stamps) > 0)
    return index, stamps


def write_bag(path, run, storage="mcap"):
    """``run`` as a rosbag2: /joint_states (positions, velocities, currents as efforts) and the
    maker's target current on TARGET_TOPIC, both stamped with the driver's stamps."""
    from rosbags.typesys import Stores, get_typestore

    types = get_typestore(Stores.ROS2_JAZZY).types
    header, time_msg = types["std_msgs/msg/Header"], types["builtin_interfaces/msg/Time"]
    target = []
    for t, value in zip(run.stamps, run.target_current):
        ns = int(round(t * 1e9))
        target.append((t, types[JOINT_STATE](
            header=header(stamp=time_msg(*divmod(ns, 1_000_000_000)), frame_id=""), name=list(JOINTS),
            position=np.zeros(0), velocity=np.zeros(0), effort=np.asarray(value, dtype=float))))
    return write_joint_states(path, run.stamps, JOINTS, run.q, run.qd, run.current, storage=storage,
                              extra={TARGET_TOPIC: (JOINT_STATE, target)})


def recording(run, source="stand-in"):
    """``run`` as a ``bag.Recording`` (what read_joint_states gives of its bag), currents as efforts."""
    from robodyn_ros.identification.bag import Recording

    ns = np.round(run.stamps * 1e9).astype(np.int64)
    return Recording(t=(ns - ns[0]) * 1e-9, time_ns=ns, joint_names=list(JOINTS), position=run.q, velocity=run.qd,
                     effort=run.current, source=source, time_source="header", effort_source="joint_states")


def validation_scores(run, t, predicted):
    """(ε, the noise floor, the maker's ε) on a validation ``run``'s measured currents, as recorded:
    ε = ‖i − î‖ / ‖i‖ over the samples within ``t`` (s from the run's first stamp; the processed
    states' grid) of ``predicted`` currents there (interpolated to the stamps: a model's prediction
    is smooth), the floor the ε a perfect model would get, ‖noise‖ / ‖i‖, and the maker's that of
    its target current."""
    stamps = run.stamps - run.stamps[0]
    inside = (stamps >= t[0]) & (stamps <= t[-1])
    at_stamps = np.column_stack([np.interp(stamps[inside], t, column) for column in np.asarray(predicted).T])
    current = run.current[inside]
    norm = np.linalg.norm(current)
    return (float(np.linalg.norm(current - at_stamps) / norm), float(np.linalg.norm(run.noise[inside]) / norm),
            float(np.linalg.norm(current - run.target_current[inside]) / norm))


def truth_models(directory):
    """(the plant as our RobotModel, read from its URDF text written into ``directory``, with the
    drives' rotor inertia and friction; the same holding the payload): the truth the estimates
    are held to."""
    import dataclasses as dc

    from robodyn_ros.dynamics import RobotModel

    path = directory / "ur5_plant.urdf"
    path.write_text(truth_urdf())
    arm = RobotModel.from_urdf(path, root_link=ROOT, tip_link=TIP)
    links = [dc.replace(link, armature=a, viscous=v, coulomb_positive=c, coulomb_negative=c)
             for link, a, v, c in zip(arm.links, ARMATURE, VISCOUS, COULOMB)]
    arm = type(arm)(links, arm.tip, arm.gravity, arm.name, arm.frames)
    return arm, arm.with_payload(*PAYLOAD)
