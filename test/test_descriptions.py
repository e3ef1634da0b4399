"""The shipped robot descriptions (urdf/, config/*_dh.yaml, config/ros2_controllers.yaml, the Gazebo
launch file) and the DH -> URDF exporter.

The URDFs are read back by two parsers that are not ours (urdfdom-py and Pinocchio), and their
masses, gravity torques, mass matrices and tool frames are compared with kinematics and dynamics
computed here directly from the DH tables: the classic Paul and Craig link matrices, and
Jacobian sums over links.  Nothing here goes through robodyn_ros.dynamics except the exporter.
"""
import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml
from urdf_parser_py.urdf import URDF

from robodyn_ros.apps.urdf_from_dh import main
from robodyn_ros.dynamics.urdf_export import dh_to_urdf

ROOT = Path(__file__).resolve().parents[1]
# (URDF, the YAML it is generated from, gazebo variant)
SHIPPED = [
    ("urdf/puma560.urdf", "config/puma560_dh.yaml", False),
    ("urdf/puma560_gazebo.urdf", "config/puma560_dh.yaml", True),
    ("urdf/stanford.urdf", "config/stanford_dh.yaml", False),
    ("urdf/planar2.urdf", "config/planar2_dh.yaml", False),
]
IDS = [urdf for urdf, _, _ in SHIPPED]
VENDOR = ["urdf/panda.urdf"]   # a vendor's description (example-robot-data), not the exporter's


def load_yaml(rel):
    return yaml.safe_load((ROOT / rel).read_text())


def read(rel):
    return (ROOT / rel).read_text()


# ---------------------------------------------------------------- independent DH kinematics/dynamics

def paul_matrix(theta, d, a, alpha):
    """Standard DH link matrix, written out (Paul 1981, eq. 2.38)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def craig_matrix(alpha_prev, a_prev, theta, d):
    """Modified DH link matrix, written out (Craig 2005, eq. 3.6)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha_prev), np.sin(alpha_prev)
    return np.array([[ct, -st, 0.0, a_prev],
                     [st * ca, ct * ca, -sa, -sa * d],
                     [st * sa, ct * sa, ca, ca * d],
                     [0.0, 0.0, 0.0, 1.0]])


def inertia_matrix(value):
    if np.shape(value) == (3, 3):
        return np.array(value, dtype=float)
    ixx, iyy, izz, ixy, iyz, ixz = value
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def dh_kinematics(spec, q):
    """World pose of each DH link frame, and (origin, unit axis) of each joint."""
    t = np.eye(4)
    frames, axes = [], []
    for link, qi in zip(spec["links"], q):
        revolute = link["joint"] == "revolute"
        theta = link.get("theta", 0.0) + (qi if revolute else 0.0)
        d = link.get("d", 0.0) + (0.0 if revolute else qi)
        if spec["convention"] == "standard":
            axes.append((t[:3, 3].copy(), t[:3, 2].copy()))  # joint i moves along z_{i-1}
            t = t @ paul_matrix(theta, d, link["a"], link["alpha"])
        else:
            t = t @ craig_matrix(link["alpha"], link["a"], theta, d)
            axes.append((t[:3, 3].copy(), t[:3, 2].copy()))  # joint i moves along z_i
        frames.append(t)
    return frames, axes


def com_jacobians(spec, q):
    """Per link: (COM position, linear Jacobian 3xn, angular Jacobian 3xn, world rotation)."""
    frames, axes = dh_kinematics(spec, q)
    n = len(frames)
    out = []
    for i, (link, t) in enumerate(zip(spec["links"], frames)):
        p = t[:3, :3] @ np.asarray(link.get("com", [0.0, 0.0, 0.0]), float) + t[:3, 3]
        jv, jw = np.zeros((3, n)), np.zeros((3, n))
        for j in range(i + 1):
            origin, z = axes[j]
            if spec["links"][j]["joint"] == "revolute":
                jv[:, j], jw[:, j] = np.cross(z, p - origin), z
            else:
                jv[:, j] = z
        out.append((p, jv, jw, t[:3, :3]))
    return out


def gravity_torque(spec, q):
    """tau_j = -sum_i m_i g . dp_ci/dq_j: the torque that holds the arm still."""
    g = np.asarray(spec["gravity"], float)
    return -sum(link.get("mass", 0.0) * (g @ jv)
                for link, (_, jv, _, _) in zip(spec["links"], com_jacobians(spec, q)))


def mass_matrix(spec, q):
    """Rigid-body M(q) = sum_i m_i Jv'Jv + Jw' R I R' Jw (no armature: URDF cannot carry it)."""
    return sum(link.get("mass", 0.0) * jv.T @ jv
               + jw.T @ rot @ inertia_matrix(link.get("inertia", [0.0] * 6)) @ rot.T @ jw
               for link, (_, jv, jw, rot) in zip(spec["links"], com_jacobians(spec, q)))


def pinocchio_model(xml, spec):
    model = pin.buildModelFromXML(xml)
    model.gravity.linear = np.asarray(spec["gravity"], float)
    return model, model.createData()


def random_configs(spec, count, seed):
    rng = np.random.default_rng(seed)
    lows = [link["limits"]["lower"] for link in spec["links"]]
    highs = [link["limits"]["upper"] for link in spec["links"]]
    return rng.uniform(lows, highs, size=(count, len(lows)))


def assert_dynamics_agree(xml, spec, seed):
    """Pinocchio on the URDF = our DH formulas: joint order, mass, gravity, M(q), tool frame."""
    model, data = pinocchio_model(xml, spec)
    assert list(model.names)[1:] == [link["name"] for link in spec["links"]]
    assert pin.computeTotalMass(model) == pytest.approx(
        sum(link.get("mass", 0.0) for link in spec["links"]), rel=1e-12, abs=1e-12)
    tool_frame = model.getFrameId("tool0")
    tool = np.asarray(spec.get("tool", np.eye(4)), float)
    for q in random_configs(spec, 5, seed):
        g_ref = gravity_torque(spec, q)
        g_pin = pin.computeGeneralizedGravity(model, data, q)
        np.testing.assert_allclose(g_pin, g_ref, rtol=1e-9, atol=1e-9 * max(1.0, abs(g_ref).max()))
        m_pin = pin.crba(model, data, q)
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        m_ref = mass_matrix(spec, q)
        np.testing.assert_allclose(m_pin, m_ref, rtol=1e-9, atol=1e-9 * abs(m_ref).max())
        pin.framesForwardKinematics(model, data, q)
        tip_ref = dh_kinematics(spec, q)[0][-1] @ tool
        np.testing.assert_allclose(data.oMf[tool_frame].homogeneous, tip_ref, atol=1e-12)


# ---------------------------------------------------------------- the shipped files

def test_every_urdf_is_listed():
    assert sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "urdf").glob("*.urdf")) == sorted(
        [*IDS, *VENDOR])


@pytest.mark.parametrize("urdf_rel, yaml_rel, gazebo", SHIPPED, ids=IDS)
def test_urdf_is_what_the_exporter_generates_now(urdf_rel, yaml_rel, gazebo):
    # Regenerate with: robodyn-ros urdf-from-dh <yaml> [--gazebo] -o <urdf>  (from the repo root)
    assert read(urdf_rel) == dh_to_urdf(load_yaml(yaml_rel), gazebo=gazebo, source=yaml_rel)


def test_cli_writes_the_shipped_file(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the header names the YAML path as given
    out = tmp_path / "out.urdf"
    assert main(["config/puma560_dh.yaml", "--gazebo", "-o", str(out)]) == 0
    assert out.read_text() == read("urdf/puma560_gazebo.urdf")


@pytest.mark.parametrize("urdf_rel, yaml_rel, gazebo", SHIPPED, ids=IDS)
def test_urdfdom_reads_joints_and_limits(urdf_rel, yaml_rel, gazebo):
    spec = load_yaml(yaml_rel)
    robot = URDF.from_xml_string(read(urdf_rel))
    movable = [j for j in robot.joints if j.type != "fixed"]
    assert [j.name for j in movable] == [link["name"] for link in spec["links"]]
    for joint, link in zip(movable, spec["links"]):
        assert joint.type == link["joint"]
        assert joint.limit.effort == link["limits"]["effort"] > 0
        assert joint.limit.velocity == link["limits"]["velocity"] > 0
        assert (joint.limit.lower, joint.limit.upper) == (link["limits"]["lower"],
                                                          link["limits"]["upper"])
    assert robot.get_root() == ("world" if gazebo else "base_link")


@pytest.mark.parametrize("urdf_rel, yaml_rel, gazebo", SHIPPED, ids=IDS)
def test_pinocchio_dynamics_match_the_dh_table(urdf_rel, yaml_rel, gazebo):
    assert_dynamics_agree(read(urdf_rel), load_yaml(yaml_rel), seed=0)


@pytest.mark.parametrize("urdf_rel, yaml_rel, gazebo", SHIPPED, ids=IDS)
def test_friction_and_armature_are_carried(urdf_rel, yaml_rel, gazebo):
    spec = load_yaml(yaml_rel)
    model = pin.buildModelFromXML(read(urdf_rel))
    ext = {j.get("name"): j for j in ET.fromstring(read(urdf_rel)).find("robodyn_ros")}
    for i, link in enumerate(spec["links"]):
        coulomb = link.get("coulomb", 0.0)
        pos, neg = (coulomb, coulomb) if np.isscalar(coulomb) else coulomb
        assert model.damping[i] == pytest.approx(link.get("viscous", 0.0), rel=1e-15)
        assert model.friction[i] == pytest.approx((pos + neg) / 2, rel=1e-15)
        joint = ext[link["name"]]
        assert float(joint.get("armature")) == link.get("armature", 0.0)
        assert (float(joint.get("coulomb_positive")), float(joint.get("coulomb_negative"))) == (pos, neg)


@pytest.mark.parametrize("urdf_rel, yaml_rel, gazebo", SHIPPED, ids=IDS)
def test_ros2_control_block(urdf_rel, yaml_rel, gazebo):
    spec = load_yaml(yaml_rel)
    root = ET.fromstring(read(urdf_rel))
    (block,) = root.findall("ros2_control")
    assert block.get("type") == "system"
    assert block.findtext("hardware/plugin") == (
        "gz_ros2_control/GazeboSimSystem" if gazebo else "mock_components/GenericSystem")
    movable = [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]
    assert [j.get("name") for j in block.findall("joint")] == movable
    efforts = {link["name"]: link["limits"]["effort"] for link in spec["links"]}
    for joint in block.findall("joint"):
        (command,) = joint.findall("command_interface")
        assert command.get("name") == "effort"
        params = {p.get("name"): float(p.text) for p in command.findall("param")}
        assert params == {"min": -efforts[joint.get("name")], "max": efforts[joint.get("name")]}
        assert sorted(s.get("name") for s in joint.findall("state_interface")) == ["position",
                                                                                   "velocity"]
    plugins = root.findall("gazebo/plugin")
    if gazebo:
        (plugin,) = plugins
        assert (plugin.get("filename"), plugin.get("name")) == (
            "gz_ros2_control-system", "gz_ros2_control::GazeboSimROS2ControlPlugin")
        prefix = "$(find robodyn_ros)/"
        parameters = plugin.findtext("parameters")
        assert parameters.startswith(prefix) and (ROOT / parameters[len(prefix):]).is_file()
    else:
        assert plugins == []


@pytest.mark.parametrize("yaml_rel", sorted({y for _, y, _ in SHIPPED}))
def test_effort_limits_hold_the_arm_against_gravity(yaml_rel):
    spec = load_yaml(yaml_rel)
    efforts = np.array([link["limits"]["effort"] for link in spec["links"]])
    for q in random_configs(spec, 500, seed=1):
        assert np.all(np.abs(gravity_torque(spec, q)) < efforts)


def test_puma_drive_terms_are_the_motor_data_reflected_to_the_link_side():
    # Motor side, as the data set gives it (config/puma560_dh.yaml's header): Jm, G, B, Tc+, Tc-.
    motor = [(200e-6, -62.6111, 1.48e-3, 0.395, -0.435),
             (200e-6, 107.815, 0.817e-3, 0.126, -0.071),
             (200e-6, -53.7063, 1.38e-3, 0.132, -0.105),
             (33e-6, 76.0364, 71.2e-6, 11.2e-3, -16.9e-3),
             (33e-6, 71.923, 82.6e-6, 9.26e-3, -14.5e-3),
             (33e-6, 76.686, 36.7e-6, 3.96e-3, -10.5e-3)]
    spec = load_yaml("config/puma560_dh.yaml")
    for link, (jm, gear, b, tc_pos, tc_neg) in zip(spec["links"], motor):
        assert link["armature"] == pytest.approx(jm * gear ** 2, rel=1e-12)
        assert link["viscous"] == pytest.approx(b * gear ** 2, rel=1e-12)
        assert link["coulomb"] == pytest.approx([abs(gear * tc_pos), abs(gear * tc_neg)], rel=1e-12)
    # the measured masses, links 2-6 (link 1's is a placeholder that enters no torque: the YAML)
    assert sum(link["mass"] for link in spec["links"][1:]) == pytest.approx(23.45)


def test_ros2_controllers_match_the_puma():
    params = load_yaml("config/ros2_controllers.yaml")
    manager = params["controller_manager"]["ros__parameters"]
    assert manager["update_rate"] == 1000
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert manager["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    effort = params["effort_controller"]["ros__parameters"]
    assert effort["interface_name"] == "effort"
    for urdf_rel in ("urdf/puma560.urdf", "urdf/puma560_gazebo.urdf"):
        robot = URDF.from_xml_string(read(urdf_rel))
        assert effort["joints"] == [j.name for j in robot.joints if j.type != "fixed"]


def test_gazebo_launch_names_things_that_exist():
    tree = ast.parse(read("launch/puma560_gazebo.launch.py"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    # Our own files: PathJoinSubstitution([share, "<dir>", "<file>"])
    own = ["/".join(e.value for e in c.args[0].elts[1:]) for c in calls
           if c.func.id == "PathJoinSubstitution" and isinstance(c.args[0].elts[0], ast.Name)
           and c.args[0].elts[0].id == "share"]
    controller_params = "config/computed_torque_controller.yaml"
    assert {"urdf/puma560_gazebo.urdf", "config/ros2_controllers.yaml", controller_params} <= set(own)
    for rel in own:
        assert (ROOT / rel).is_file(), rel
    nodes = [{k.arg: k.value for k in c.keywords} for c in calls
             if c.func.id in ("Node", "managed_node")]  # managed_node: a LifecycleNode
    spawned = [n["arguments"].elts[0].value for n in nodes if n["executable"].value == "spawner"]
    manager = load_yaml("config/ros2_controllers.yaml")["controller_manager"]["ros__parameters"]
    assert spawned == ["joint_state_broadcaster", "effort_controller"]
    assert all(name in manager for name in spawned)
    ours = [n for n in nodes if n["package"].value == "robodyn_ros"]
    assert [n["executable"].value for n in ours] == ["computed_torque_controller"]
    assert "computed_torque_controller = " in read("setup.py")


# ---------------------------------------------------------------- the exporter on random arms

def random_spec(convention, seed):
    """Revolute and prismatic joints, twists and offsets on and off multiples of pi/2, full inertia
    tensors, one massless link, a tool transform.  URDF's rpy has a gimbal lock at pitch +-pi/2:
    link 4 (alpha = theta = pi/2 in modified DH) and every other tool hit it."""
    rng = np.random.default_rng(seed)

    def angle():
        return rng.choice([rng.uniform(-np.pi, np.pi), rng.integers(-2, 3) * np.pi / 2])

    links = []
    for i in range(6):
        a = rng.standard_normal((3, 3))
        links.append({
            "name": f"j{i}", "joint": rng.choice(["revolute", "prismatic"]),
            "a": float(rng.uniform(-0.5, 0.5)), "alpha": float(angle()),
            "d": float(rng.uniform(-0.5, 0.5)), "theta": float(angle()),
            "mass": 0.0 if i == 2 else float(rng.uniform(0.5, 5.0)),
            "com": [0.0] * 3 if i == 2 else rng.uniform(-0.3, 0.3, 3).tolist(),
            "inertia": [[0.0] * 3] * 3 if i == 2 else (a @ a.T * 0.1 + 0.01 * np.eye(3)).tolist(),
            "viscous": float(rng.uniform(0, 2)), "coulomb": rng.uniform(0, 2, 2).tolist(),
            "armature": float(rng.uniform(0, 1)),
            "limits": {"lower": -1.0, "upper": 1.0, "velocity": 2.0, "effort": 50.0},
        })
    links[4].update(alpha=np.pi / 2, theta=np.pi / 2)
    roll, pitch, yaw = rng.uniform(-np.pi, np.pi, 3)
    rot = pin.rpy.rpyToMatrix(roll, (-1) ** seed * np.pi / 2 if seed % 4 < 2 else pitch, yaw)
    tool = np.eye(4)
    tool[:3, :3], tool[:3, 3] = rot, rng.uniform(-0.2, 0.2, 3)
    return {"name": f"random_{convention}", "convention": convention,
            "gravity": rng.standard_normal(3).tolist(), "tool": tool.tolist(), "links": links}


@pytest.mark.parametrize("convention", ["standard", "modified"])
@pytest.mark.parametrize("seed", range(8))
def test_random_arms_round_trip_through_pinocchio(convention, seed):
    spec = random_spec(convention, seed)
    xml = dh_to_urdf(spec)
    assert_dynamics_agree(xml, spec, seed)
    massless = URDF.from_xml_string(xml).link_map["link_3"]
    assert massless.inertial is None  # never a made-up mass


@pytest.mark.parametrize("change, message", [
    (lambda s: s["links"][0].update(mass="200e-6"), "expected a number"),  # YAML 1.1 reads a string
    (lambda s: s["links"][0]["limits"].pop("effort"), "limits lack"),
    (lambda s: s["links"][0].update(joint="spherical"), "joint must be one of"),
    (lambda s: s.update(convention="craig"), "convention must be one of"),
    (lambda s: s["links"][1].update(mass=-1.0), "negative mass"),
    (lambda s: s["links"][1].update(inertia=[[1, 0, 0], [0.5, 1, 0], [0, 0, 1]]), "symmetric"),
])
def test_bad_specs_are_refused_with_the_reason(change, message):
    spec = load_yaml("config/planar2_dh.yaml")
    change(spec)
    with pytest.raises(ValueError, match=message):
        dh_to_urdf(spec)
