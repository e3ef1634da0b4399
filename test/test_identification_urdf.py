"""An identified model written back into its URDF (robodyn_ros.identification.urdf_write).

A different, physical model is made from the nominal one (masses scaled, centres of mass shifted,
inertias turned and scaled, new friction and armature) and its standard parameters π written into
the nominal file. Read back, the file must be that model: its inverse dynamics Y π (the regressor)
and the perturbed model's, its standard parameters π; MuJoCo reading it must compute the same
inverse dynamics; check-urdf must find nothing; and the rest of the nominal file must be there.
Arms: the shipped PUMA, UR5 (axes along y: Q ≠ I; ee_link and tool0 fixed to the last link), Panda
(the hand fixed beyond the tip is lumped, the fingers are a branch left out) and random chains
(any axis, prismatic joints, fixed links inside the chain and beyond the tip, massless links).
"""
import dataclasses
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.dynamics.description import read_description
from robodyn_ros.identification import regressor, standard_parameters
from robodyn_ros.identification.urdf_write import identified_urdf, write_identified_urdf
from robodyn_ros.apps import check_urdf as check_urdf_command
from robodyn_ros.sim import check_urdf
from urdf_factory import random_rotation, random_urdf

ROOT = Path(__file__).resolve().parents[1]
PUMA = ROOT / "urdf/puma560.urdf"
REL = 1e-12
DT = 1e-3
# (nominal file under example-robot-data's robots/, root_link, tip_link)
VENDOR = {"ur5": ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
          "panda": ("panda_description/urdf/panda.urdf", "panda_link0", "panda_link8")}
CASES = ["puma", "ur5", "panda", "random-0", "random-1", "random-2"]
# Panda's <dynamics> carries attributes the ROS parser does not know; it says so on every read
pytestmark = pytest.mark.filterwarnings(r"ignore:.*Unknown attribute .* in /robot\[@name='panda'\]")


def load(nominal, root=None, tip=None):
    with warnings.catch_warnings():   # left-out branches, missing limits: warned, rightly
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(nominal, root_link=root, tip_link=tip)


def arm(name):
    """(nominal: a path or XML, root_link, tip_link)."""
    if name == "puma":
        return PUMA, None, None
    if name in VENDOR:
        from vendor_robots import robots_directory   # skips the test when example-robot-data is absent
        file, root, tip = VENDOR[name]
        return robots_directory() / file, root, tip
    seed = int(name.split("-")[1])
    rng = np.random.default_rng(700 + seed)
    # seed 0 has a movable branch off the chain (MuJoCo's engine simulates whole trees only)
    random = random_urdf(rng, 6, prismatic=0.3, fixed_in_chain=0.5, massless=0.3, friction=True,
                         branch=seed == 0)
    return random.xml, None, random.tip


def perturbed(model, seed):
    """Another physical arm on the same joints: bodies changed the way a physical body can change,
    a massless body left massless; new drive parameters."""
    rng = np.random.default_rng(seed)
    links = []
    for link in model.links:
        body = {}
        if link.mass > 0.0:
            R = random_rotation(rng)
            body = dict(mass=link.mass * rng.uniform(0.6, 1.4),
                        com=link.com + rng.uniform(-0.05, 0.05, 3),
                        inertia=rng.uniform(0.6, 1.4) * R @ link.inertia @ R.T)
        links.append(dataclasses.replace(
            link, **body, armature=rng.uniform(0.0, 1.0), viscous=rng.uniform(0.0, 3.0),
            coulomb_positive=rng.uniform(0.0, 2.0), coulomb_negative=rng.uniform(0.0, 2.0)))
    return RobotModel(links, model.tip, model.gravity, model.name)


@pytest.fixture(scope="module", params=CASES)
def case(request):
    """(name, nominal, root, tip, the nominal model, the perturbed model, the file written)."""
    nominal, root, tip = arm(request.param)
    model = load(nominal, root, tip)
    truth = perturbed(model, seed=CASES.index(request.param))
    xml = identified_urdf(nominal, model, standard_parameters(truth), root_link=root, tip_link=tip)
    return request.param, nominal, root, tip, model, truth, xml


def states(model, seed, count=8):
    rng = np.random.default_rng(seed)
    n = model.dof
    q = rng.uniform(-1.0, 1.0, (count, n)) * np.where(np.isfinite(model.upper), model.upper, 1.0)
    return q, rng.uniform(-2.0, 2.0, (count, n)), rng.uniform(-5.0, 5.0, (count, n))


def close(actual, expected, rel=REL):
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rel * max(1.0, np.abs(expected).max()))


# ---------------------------------------------------------------- the file is the identified model
def test_the_written_file_is_the_identified_model(case, tmp_path):
    name, nominal, root, tip, model, truth, xml = case
    path = tmp_path / "identified.urdf"
    write_identified_urdf(nominal, model, standard_parameters(truth), path, root_link=root,
                          tip_link=tip)
    assert path.read_text(encoding="utf-8") == xml
    loaded = load(path, root, tip)
    pi = standard_parameters(truth)
    # per parameter: an inertia is small beside m |c|^2, which it is converted through
    np.testing.assert_allclose(standard_parameters(loaded), pi, rtol=1e-12, atol=1e-14)
    q, qd, qdd = states(model, 1)
    expected = regressor(model, q, qd, qdd) @ pi     # Y depends on the joints only: the nominal's
    close(loaded.inverse_dynamics(q, qd, qdd), expected)
    close(truth.inverse_dynamics(q, qd, qdd), expected)  # the perturbation is what Y π says
    assert not np.allclose(model.inverse_dynamics(q, qd, qdd), expected, rtol=1e-3)  # and it shows


def test_mujoco_reads_the_written_file_as_the_identified_model(case):
    name, nominal, root, tip, model, truth, xml = case
    if name in ("panda", "random-0"):
        pytest.skip("a branch off the chain: MuJoCo's engine simulates the whole tree")
    mujoco = pytest.importorskip("mujoco")
    from robodyn_ros.sim import mujoco_engine
    loaded = load(xml, root, tip)
    m, d = mujoco_engine.compile_urdf(xml, loaded, DT, root=root)  # bodies: the file's, as written
    q, qd, qdd = states(model, 2)
    for k in range(len(q)):
        d.qpos[:], d.qvel[:], d.qacc[:] = q[k], qd[k], qdd[k]
        mujoco.mj_inverse(m, d)
        # MuJoCo applies damping (viscous), not Coulomb friction
        tau = truth.inverse_dynamics(q[k], qd[k], qdd[k], friction=False) + truth.viscous * qd[k]
        close(d.qfrc_inverse, tau)


def test_mujoco_compiles_the_written_puma_itself():
    # its own URDF compiler, which refuses bodies that are not rigid ("mass and inertia of moving
    # bodies must be larger than mjMINVAL"): no placeholder inertials here
    mujoco = pytest.importorskip("mujoco")
    model = load(PUMA)
    truth = perturbed(model, 3)
    m = mujoco.MjModel.from_xml_string(identified_urdf(PUMA, model, standard_parameters(truth)))
    np.testing.assert_allclose(sorted(m.body_mass[1:]), sorted(link.mass for link in truth.links), rtol=1e-15)


def test_check_urdf_finds_nothing(case, tmp_path, capsys):
    name, nominal, root, tip, model, truth, xml = case
    if any(link.mass == 0.0 for link in model.links):
        pytest.skip("a massless moving link: check-urdf reports it, as it does in the nominal file")
    assert check_urdf.check(xml) == []
    path = tmp_path / "identified.urdf"
    path.write_text(xml, encoding="utf-8")
    chain = [a for option, link in (("--root-link", root), ("--tip-link", tip)) if link
             for a in (option, link)]   # the chain identified (several leaves: a gripper)
    assert check_urdf_command.main([str(path), *chain]) == 0, capsys.readouterr().out


# ---------------------------------------------------------------- and otherwise the nominal file
def riding_links(robot, chain):
    """{link: the chain joint whose body it rides on}: the first movable joint above it is on the
    chain (walked upwards, independently of the loader's walk down)."""
    parent = {joint.child: joint for joint in robot.joints}
    riding = {}
    for link in robot.links:
        joint = parent.get(link.name)
        while joint is not None and joint.type == "fixed":
            joint = parent.get(joint.parent)
        if joint is not None and joint.name in chain:
            riding[link.name] = joint
    return riding


def parsed(text):
    """The <robot> element, comments inside it kept."""
    return ET.fromstring(text, ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))


def without_identified(robot, riding, chain):
    """``robot`` without what identification writes: the riding links' <inertial>, the chain
    joints' <dynamics>, their <robodyn_ros> entries, the comments on merged bodies."""
    for link in robot.findall("link"):
        for e in list(link):
            if link.get("name") in riding and (e.tag == "inertial" or e.tag is ET.Comment
                                               and "merged into" in e.text):
                link.remove(e)
    for joint in robot.findall("joint"):
        if joint.get("name") in chain:
            for e in joint.findall("dynamics"):
                joint.remove(e)
    for block in robot.findall("robodyn_ros"):
        for e in block.findall("joint"):
            if e.get("name") in chain:
                block.remove(e)
        if not len(block):
            robot.remove(block)
    return ET.canonicalize(ET.tostring(robot, encoding="unicode"), with_comments=True,
                           strip_text=True)


def test_the_written_file_says_it_is_a_copy_and_the_nominal_file_is_unchanged(case):
    name, nominal, root, tip, model, truth, xml = case
    header = xml.split("\n")[1]
    assert header.startswith("<!-- A copy of ") and "(that file is unchanged)" in header, header
    assert read_description(nominal)[0] in header


def test_the_rest_of_the_nominal_file_is_kept(case):
    name, nominal, root, tip, model, truth, xml = case
    from robodyn_ros.sim.bodies import parse_urdf
    text = read_description(nominal)[1]
    chain = set(model.joint_names)
    riding = riding_links(parse_urdf(text), chain)
    assert (without_identified(parsed(xml), riding, chain)
            == without_identified(parsed(text), riding, chain))
    before, after = parsed(text), parsed(xml)
    # one <robodyn_ros> entry per chain joint, an existing block's replaced
    entries = [e.get("name") for e in after.findall("robodyn_ros/joint") if e.get("name") in chain]
    assert sorted(entries) == sorted(chain)
    # each body on its chain link, the links lumped into it emptied, with a word where it went
    links = {e.get("name"): e for e in after.findall("link")}
    nominal_links = {e.get("name"): e for e in before.findall("link")}
    for link, joint in riding.items():
        if link == joint.child:
            body = truth.links[model.joint_names.index(joint.name)]
            assert len(links[link].findall("inertial")) == (body.mass > 0.0)
            if body.mass > 0.0 and nominal_links[link].find("inertial") is not None:  # in its place
                assert (list(links[link]).index(links[link].find("inertial"))
                        == list(nominal_links[link]).index(nominal_links[link].find("inertial")))
            continue
        assert links[link].find("inertial") is None
        said = [e.text for e in links[link] if e.tag is ET.Comment]
        assert (f" <inertial> merged into '{joint.child}' by identification " in said) == (
            nominal_links[link].find("inertial") is not None)


def test_urdf_parsers_read_the_drive_terms_urdf_has(case):
    """<dynamics>: damping the viscous coefficient, friction the mean Coulomb magnitude (what a
    parser that does not know <robodyn_ros> sees: the ROS parser, Pinocchio, Gazebo)."""
    name, nominal, root, tip, model, truth, xml = case
    from robodyn_ros.sim.bodies import parse_urdf
    joints = {joint.name: joint for joint in parse_urdf(xml).joints}
    for link in truth.links:
        assert joints[link.name].dynamics.damping == link.viscous
        assert joints[link.name].dynamics.friction == (link.coulomb_positive
                                                       + link.coulomb_negative) / 2.0


def test_a_links_inertial_stays_where_it_was():
    anchor = '</link>\n  <joint name="joint_2"'
    text = PUMA.read_text().replace(anchor, '<!-- a comment --><visual><geometry><box size="0.1 '
                                    '0.1 0.1"/></geometry></visual>' + anchor)
    xml = identified_urdf(text, load(text), standard_parameters(perturbed(load(text), 4)))
    link_2 = parsed(xml).find("link[@name='link_2']")
    shapes = [e.tag for e in parsed(PUMA.read_text()).find("link[@name='link_2']")][1:]
    assert [e.tag for e in link_2] == ["inertial", *shapes, ET.Comment, "visual"]
    assert link_2[1 + len(shapes)].text == " a comment "


def test_what_the_cases_claim():
    """Turned axes, bodies lumped into a chain link, massless bodies, branches and other tools'
    blocks are really in the cases (else the tests above would prove less than they say)."""
    from robodyn_ros.sim.bodies import parse_urdf, urdf_bodies
    has = {}
    for name in CASES:
        nominal, root, tip = arm(name)
        model = load(nominal, root, tip)
        text = read_description(nominal)[1]
        robot = parse_urdf(text)
        riding, bodies = riding_links(robot, set(model.joint_names)), urdf_bodies(robot)
        has[name] = {
            "turned": any(list(j.axis or (1, 0, 0)) != [0, 0, 1] for j in robot.joints
                          if j.name in model.joint_names),
            "lumped": any(bodies[link][0] > 0.0 for link, j in riding.items() if link != j.child),
            "massless": any(link.mass == 0.0 for link in model.links),
            "branch": sum(j.type != "fixed" for j in robot.joints) > model.dof,
            "foreign": [tag for tag in ("<ros2_control", "<transmission", "<gazebo", "<!--")
                        if tag in text.partition("<robot")[2]]}
    assert {name for name in CASES if has[name]["turned"]} == {"ur5", *CASES[3:]}
    assert {name for name in CASES if has[name]["lumped"]} == {"panda", *CASES[3:]}
    assert {name for name in CASES if has[name]["massless"]} == {"random-0", "random-1"}
    assert {name for name in CASES if has[name]["branch"]} == {"panda", "random-0"}
    assert has["puma"]["foreign"] == ["<ros2_control"]
    assert has["ur5"]["foreign"] == ["<transmission", "<gazebo", "<!--"]


# ---------------------------------------------------------------- decisions: bodies, offset, errors
def with_link(model, index, **body):
    links = list(model.links)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        links[index] = dataclasses.replace(links[index], **body)
    return RobotModel(links, model.tip, model.gravity, model.name)


# the raw PUMA data set's link 1 (a rotor: no mass, 0.35 kg m^2 about its axis, which is z in the
# joint frame) and link 3 (0.066 + 0.0125 < 0.086)
RAW = {"rotor": (0, dict(mass=0.0, com=np.zeros(3), inertia=np.diag([0.0, 0.0, 0.35])),
                 "mass 0 is not positive"),
       "triangle": (2, dict(inertia=np.diag([0.066, 0.0125, 0.086])),
                      "principal moments violate the triangle inequality")}


@pytest.mark.parametrize("raw", RAW)
def test_a_body_no_simulator_takes_is_refused_unless_asked(raw):
    index, body, problem = RAW[raw]
    model = load(PUMA)
    truth = with_link(model, index, **body)
    pi = standard_parameters(truth)
    with pytest.raises(ModelError, match=f"joint '{model.joint_names[index]}': {problem}"):
        identified_urdf(PUMA, model, pi)
    with pytest.warns(UserWarning, match=f"joint '{model.joint_names[index]}': {problem}"):
        xml = identified_urdf(PUMA, model, pi, physical=False)
    np.testing.assert_allclose(standard_parameters(load(xml)), pi, rtol=1e-12, atol=1e-14)
    assert [link for link, _, _ in check_urdf.check(xml)] == [f"link_{index + 1}"]


def test_a_massless_body_is_written_without_inertial():
    model = load(PUMA)
    truth = with_link(model, 4, mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xml = identified_urdf(PUMA, model, standard_parameters(truth))
    link_5 = [e for e in parsed(xml).findall("link") if e.get("name") == "link_5"][0]
    assert link_5.find("inertial") is None and parsed(PUMA.read_text()).find(
        "link[@name='link_5']/inertial") is not None
    np.testing.assert_array_equal(standard_parameters(load(xml))[40:50], np.zeros(10))


def test_a_first_moment_without_mass_is_refused():
    model = load(PUMA)
    pi = standard_parameters(model)
    pi[30], pi[31] = 0.0, 0.1     # joint_4: m = 0, m c_x = 0.1
    with pytest.raises(ModelError, match="joint 'joint_4': first moment .* with zero mass"):
        identified_urdf(PUMA, model, pi)


def test_an_offset_is_not_written_and_a_nonzero_one_is_warned_about():
    model = load(PUMA)
    truth = perturbed(model, 9)
    pi = standard_parameters(truth, offset=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # zero offsets: nothing to say
        same = identified_urdf(PUMA, model, pi, offset=True)
    assert same == identified_urdf(PUMA, model, standard_parameters(truth))
    pi[60 + 5 * 2 + 4] = 1.5          # joint_3's offset
    with pytest.warns(UserWarning, match=r"drive offsets .*'joint_3': 1\.5.* not written"):
        xml = identified_urdf(PUMA, model, pi, offset=True)
    assert xml == same
    np.testing.assert_allclose(standard_parameters(load(xml)), standard_parameters(truth),
                               rtol=1e-12, atol=1e-14)


def test_negative_drive_parameters_are_refused():
    model = load(PUMA)
    pi = standard_parameters(model)
    pi[60 + 4 * 1 + 1] = -0.5          # joint_2's viscous
    with pytest.raises(ModelError, match="joint 'joint_2': viscous -0.5 must be non-negative"):
        identified_urdf(PUMA, model, pi)


@pytest.mark.parametrize("bad, said", [(np.zeros(83), r"expected 84 .* shape \(83,\)"),
                                       (np.full(84, np.nan), r"not finite: \['joint_1.m'")])
def test_a_parameter_vector_of_another_layout_is_refused(bad, said):
    with pytest.raises(ModelError, match=said):
        identified_urdf(PUMA, load(PUMA), bad)


def test_a_nominal_file_the_model_was_not_loaded_from_is_refused():
    file, root, tip = arm("panda")
    panda = load(file, root, tip)
    with pytest.raises(ModelError, match=r"has the joints \['panda_joint1', .*'panda_joint4'\]"):
        identified_urdf(file, panda, standard_parameters(panda), root_link=root,
                        tip_link="panda_link4")
    ur5 = load(*arm("ur5"))
    ur10 = arm("ur5")[0].parent / "ur10_robot.urdf"
    with pytest.raises(ModelError, match="joint 'shoulder_pan_joint' is not where the model has it"):
        identified_urdf(ur10, ur5, standard_parameters(ur5), root_link="base_link",
                        tip_link="tool0")
