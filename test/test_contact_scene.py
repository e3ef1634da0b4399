"""Collision shapes in the shipped URDFs and the MuJoCo contact scene (sim/contact.py).

The shapes are geometry only: the models read from the URDFs are the same with and without them,
and check-urdf says the same. MuJoCo, loading the URDF, sees one geom of nonzero size per moving
link; an obstacle placed in the path of the 004 motion is touched (mj_contactForce > 0) by the
forearm, link_3, the link whose shape sweeps through that place; a soft obstacle pushes back less.
"""
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.control.laws import ComputedTorque
from robodyn_ros.control.trajectory import JointTrajectory, TrajectorySampler
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.link import ModelError
from robodyn_ros.dynamics.transforms import rpy_to_matrix
from robodyn_ros.dynamics.urdf_export import dh_to_urdf
from robodyn_ros.sim.check_urdf import check

mujoco = pytest.importorskip("mujoco")
from robodyn_ros.sim.contact import ContactScene, Obstacle  # noqa: E402 (needs mujoco)
from robodyn_ros.sim.mujoco_engine import MujocoEngine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIMULATED = ["urdf/puma560.urdf", "urdf/puma560_gazebo.urdf", "urdf/planar2.urdf", "urdf/panda.urdf"]
WITH_SHAPES = [*SIMULATED, "urdf/stanford.urdf"]   # the Stanford arm's link 5 MuJoCo refuses
DT = 1e-3
Q_START = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])   # the 004 motion
Q_GOAL = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])
# where the forearm's shape is 2 s into the 3 s motion (without the obstacle)
IN_THE_PATH = (0.286, 0.142, 0.999)


def read_model(xml):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return RobotModel.from_urdf(xml)


def without_shapes(xml):
    root = ET.fromstring(xml)
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    return ET.tostring(root, encoding="unicode")


@pytest.mark.parametrize("rel", WITH_SHAPES)
def test_shapes_stay_out_of_the_dynamics(rel):
    xml = (ROOT / rel).read_text()
    bare = without_shapes(xml)
    assert bare != xml and "<collision" not in bare
    np.testing.assert_array_equal(read_model(xml).params, read_model(bare).params)
    assert check(xml) == check(bare)


@pytest.mark.parametrize("rel", SIMULATED)
def test_mujoco_sees_the_shapes_of_every_moving_link(rel):
    # the moving links' shapes, and a tool's (the Panda's hand) on a link fixed to the last one
    spec = mujoco.MjSpec.from_string((ROOT / rel).read_text())
    spec.compiler.fusestatic = False
    m = spec.compile()
    moving = {m.body(m.jnt_bodyid[j]).name for j in range(m.njnt)}
    geoms = {m.body(m.geom_bodyid[g]).name for g in range(m.ngeom)}
    assert geoms - moving <= {"panda_hand"} and moving <= geoms
    assert np.all(m.geom_size[:, :2] > 0.0)


def test_shape_is_a_cylinder_between_the_points_in_dh_frame_i():
    # planar2, link 1: from (−1, 0, 0) to (0, 0, 0) in DH frame 1 = the joint frame moved by a = 1
    # along x: a cylinder of length 1 centred at (0.5, 0, 0) along x of the URDF link
    root = ET.fromstring((ROOT / "urdf/planar2.urdf").read_text())
    link = next(e for e in root.findall("link") if e.get("name") == "link_1")
    for tag in ("visual", "collision"):
        element = link.find(tag)
        origin = element.find("origin")
        np.testing.assert_allclose([float(x) for x in origin.get("xyz").split()], [0.5, 0.0, 0.0],
                                   atol=1e-15)
        R = rpy_to_matrix([float(x) for x in origin.get("rpy").split()])
        np.testing.assert_allclose(R[:, 2], [1.0, 0.0, 0.0], atol=1e-15)
        cylinder = element.find("geometry/cylinder")
        assert (float(cylinder.get("length")), float(cylinder.get("radius"))) == (1.0, 0.05)


@pytest.mark.parametrize("shape", [
    {"radius": 0.1, "from": [0, 0, 0]}, {"radius": 0.0, "from": [0, 0, 0], "to": [1, 0, 0]},
    {"radius": 0.1, "from": [0, 0, 0], "to": [0, 0, 0]}, {"radius": 0.1, "from": [0, 0], "to": [1, 0]},
    {"radius": "big", "from": [0, 0, 0], "to": [1, 0, 0]}, [0.1]])
def test_bad_shape_is_refused_naming_the_link(shape):
    spec = yaml.safe_load((ROOT / "config/planar2_dh.yaml").read_text())
    spec["links"][1]["shape"] = shape
    with pytest.raises(ModelError, match="planar2.yaml.*link 2, joint 'joint_2': shape"):
        dh_to_urdf(spec, source="planar2.yaml")


def puma():
    return read_model(ROOT / "urdf/puma560.urdf").scaled(friction=0.0)


def run_004(scene, model, duration, observe=lambda q, qd, tau: None):
    """The 004 motion under computed torque in ``scene`` (an Engine: it clamps at the effort
    limits); ``observe(q, q̇, τ)`` after each step with the torque applied over it. Returns the
    largest normal force per link."""
    sampler = TrajectorySampler(model.joint_names, Q_START)
    sampler.set_trajectory(JointTrajectory(model.joint_names, [3.0], [Q_GOAL], [np.zeros(6)],
                                           [np.zeros(6)]), 0.0)
    law = ComputedTorque(model, {"kp": 100.0, "kd": 20.0})
    scene.reset()
    q, qd = Q_START.copy(), np.zeros(6)
    peak = {}
    for k in range(int(round(duration / DT))):
        tau = law.compute(q, qd, *sampler.sample(k * DT), DT).copy()
        q, qd = scene.step(q, qd, tau)
        observe(q, qd, scene.applied(tau))
        for touch in scene.touches:
            assert touch.obstacle == "obstacle"
            peak[touch.link] = max(peak.get(touch.link, 0.0), touch.force)
    return peak


def test_without_obstacle_the_scene_is_the_engine():
    model = puma()
    urdf = (ROOT / "urdf/puma560.urdf").read_text()
    scene, engine = ContactScene(model, DT, urdf), MujocoEngine(model, DT, urdf)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, tau = rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6), rng.uniform(-20, 20, 6)
        wrench = rng.uniform(-10.0, 10.0, 6)
        np.testing.assert_allclose(scene.step(q, qd, tau, wrench), engine.step(q, qd, tau, wrench),
                                   atol=1e-12)
        assert scene.touches == []
    assert run_004(scene, model, 3.0) == {} and scene.first_contact is None


def soft(**kwargs):
    return Obstacle(IN_THE_PATH, "sphere", (0.04,), solref=(0.05, 1.0), solimp=(0.5, 0.95, 0.02),
                    **kwargs)


def test_an_obstacle_in_the_path_is_touched_by_the_forearm():
    model = puma()
    urdf = (ROOT / "urdf/puma560.urdf").read_text()
    rigid = ContactScene(model, DT, urdf, [Obstacle(IN_THE_PATH, "sphere", (0.04,))])
    peaks = run_004(rigid, model, 2.5)
    time, link, force = rigid.first_contact
    assert link == "link_3" and force > 0.0 and 0.5 < time < 2.0
    assert set(peaks) == {"link_3"}
    gentle = ContactScene(model, DT, urdf, [soft()])
    soft_peaks = run_004(gentle, model, 2.5)
    assert gentle.first_contact[1] == "link_3"
    assert soft_peaks["link_3"] < peaks["link_3"]
    rigid.reset()
    assert rigid.first_contact is None and rigid.time == 0.0


def test_the_observer_detects_and_isolates_a_contact_it_did_not_simulate():
    """MuJoCo's contact with the obstacle, which nothing here computes: the observer on the exact
    model, thresholds calibrated from the collision-free motion in the same scene (floor 0.5 N m),
    detects it within 5 ms of MuJoCo's first contact and isolates it to the forearm."""
    from robodyn_ros.control.collision import CollisionDetector, child_links, fit_thresholds
    from robodyn_ros.control.momentum_observer import MomentumObserver
    model = puma()
    urdf = (ROOT / "urdf/puma560.urdf").read_text()

    def observe(scene, detector=None):
        observer = MomentumObserver(model, 50.0)
        observer.reset(Q_START, np.zeros(6))
        residuals, velocities, events = [], [], []

        def step(q, qd, tau):
            residuals.append(observer.step(q, qd, tau, DT).copy())
            velocities.append(qd)
            if detector is not None:
                events.append(detector.check(scene.time, residuals[-1], qd))
        run_004(scene, model, 2.0, step)
        return np.array(residuals), np.array(velocities), events[-1] if events else None

    thresholds = fit_thresholds(model.joint_names, *observe(ContactScene(model, DT, urdf))[:2],
                                50.0, floor=0.5)
    for obstacle in (Obstacle(IN_THE_PATH, "sphere", (0.04,)), soft()):
        scene = ContactScene(model, DT, urdf, [obstacle])
        event = observe(scene, CollisionDetector(thresholds, child_links(urdf, model.joint_names)))[2]
        touched, link, _ = scene.first_contact
        assert touched <= event.time <= touched + 0.005
        assert event.link == link == "link_3"


@pytest.mark.parametrize("kwargs, match", [
    (dict(position=(0.0, 0.0)), "position"), (dict(position=(0.0, 0.0, np.nan)), "position"),
    (dict(shape="cone"), "shape"), (dict(size=(0.0,)), "size"), (dict(size=(1, 1, 1, 1)), "size")])
def test_bad_obstacle_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Obstacle(**{"position": (0.0, 0.0, 1.0), **kwargs})
