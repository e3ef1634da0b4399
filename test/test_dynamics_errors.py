"""Bad robot descriptions: each error names the file and the element and says what is wrong; things
that are odd but usable (a non-physical inertia, a non-unit axis) warn instead; URDF conventions
(massless links without <inertial>, continuous = revolute without limits) hold.

Every file is written to tmp_path so that the message can be checked for the file's path.
"""
import re
import warnings

import numpy as np
import pytest
import yaml

from robodyn_ros.dynamics import ModelError, RobotModel

INERTIAL = ('<inertial><origin xyz="0.1 0 0"/><mass value="{m}"/>'
            '<inertia ixx="{ixx}" iyy="0.02" izz="0.02" ixy="0" iyz="0" ixz="0"/></inertial>')


def link(name, m=1.0, ixx=0.02, inertial=True):
    return f'<link name="{name}">{INERTIAL.format(m=m, ixx=ixx) if inertial else ""}</link>'


def joint(name, parent, child, kind="revolute", axis="0 0 1", xyz="0 0 0.3"):
    limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{kind}"><origin xyz="{xyz}"/><parent link="{parent}"/>'
            f'<child link="{child}"/>{ax}{limit}</joint>')


def robot(*elements, name="test_arm", extra=""):
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(elements) + extra + "\n</robot>\n"


def two_link(**overrides):
    parts = dict(l1=link("l1"), l2=link("l2"), j1=joint("j1", "base", "l1"), j2=joint("j2", "l1", "l2"))
    parts.update(overrides)
    return robot(link("base"), parts["l1"], parts["l2"], parts["j1"], parts["j2"])


def write(tmp_path, text, name="arm.urdf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def raises_naming(path, *fragments, **kwargs):
    """Load the URDF at path; the ModelError must name the file and every fragment."""
    with pytest.raises(ModelError) as info:
        RobotModel.from_urdf(path, **kwargs)
    message = str(info.value)
    assert str(path) in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


# ------------------------------------------------------------------ URDF errors

def test_malformed_xml(tmp_path):
    path = write(tmp_path, two_link()[:-12])     # cut off the closing tags
    raises_naming(path, "malformed XML")


def test_root_element_not_robot(tmp_path):
    path = write(tmp_path, two_link().replace("<robot ", "<model ").replace("</robot>", "</model>"))
    raises_naming(path, "<model>", "<robot>")


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="nothere.urdf"):
        RobotModel.from_urdf(tmp_path / "nothere.urdf")


@pytest.mark.parametrize("role", ["root_link", "tip_link"])
def test_unknown_root_or_tip_lists_the_links(tmp_path, role):
    path = write(tmp_path, two_link())
    message = raises_naming(path, role, "'gripper'", **{role: "gripper"})
    for name in ("base", "l1", "l2"):
        assert f"'{name}'" in message


def test_several_leaves_without_tip_link_lists_them(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"), link("left"), link("right"),
                                 joint("j1", "base", "l1"), joint("jl", "l1", "left"), joint("jr", "l1", "right")))
    message = raises_naming(path, "'left'", "'right'", "tip_link")
    # naming one resolves it, and the other branch is left out with a warning naming its joint
    with pytest.warns(UserWarning, match="jr"):
        assert RobotModel.from_urdf(path, tip_link="left").joint_names == ["j1", "jl"]
    assert "several leaf links" in message


def test_tip_not_below_root(tmp_path):
    path = write(tmp_path, two_link())
    raises_naming(path, "'l1'", "'l2'", "not below", root_link="l2", tip_link="l1")


def test_link_child_of_two_joints(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"), link("l2"), joint("j1", "base", "l1"),
                                 joint("j2", "l1", "l2"), joint("j3", "base", "l2")))
    raises_naming(path, "'l2'", "'j2'", "'j3'", "loop")


@pytest.mark.parametrize("kind", ["planar", "floating"])
def test_planar_or_floating_joint_on_the_chain(tmp_path, kind):
    path = write(tmp_path, two_link(j2=joint("j2", "l1", "l2", kind=kind)))
    raises_naming(path, "'j2'", f"'{kind}'")


def test_negative_mass(tmp_path):
    path = write(tmp_path, two_link(l2=link("l2", m=-1.0)))
    raises_naming(path, "'l2'", "<inertial>", "mass -1.0")


def test_negative_moment_of_inertia(tmp_path):
    path = write(tmp_path, two_link(l2=link("l2", ixx=-0.5)))
    raises_naming(path, "'l2'", "<inertial>", "negative moment of inertia")


def test_asymmetric_inertia_cannot_come_from_urdf_but_a_bad_one_warns(tmp_path):
    # URDF gives six numbers, so an inertia is always symmetric; a non-physical one warns
    path = write(tmp_path, two_link(l2=link("l2", ixx=0.1)))      # 0.1 > 0.02 + 0.02
    with pytest.warns(UserWarning, match="triangle inequality"):
        RobotModel.from_urdf(path)


def test_axis_of_zero_length(tmp_path):
    path = write(tmp_path, two_link(j2=joint("j2", "l1", "l2", axis="0 0 0")))
    raises_naming(path, "'j2'", "axis")


def test_extension_naming_no_joint(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"), joint("j1", "base", "l1"),
                                 extra='<robodyn_ros><joint name="j7" armature="0.1"/></robodyn_ros>'))
    raises_naming(path, "<robodyn_ros>", "'j7'", "no such joint")


def test_extension_non_numeric_armature(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"), joint("j1", "base", "l1"),
                                 extra='<robodyn_ros><joint name="j1" armature="heavy"/></robodyn_ros>'))
    raises_naming(path, "<robodyn_ros>", "'j1'", "armature", "'heavy'", "not a number")


def test_extension_values_are_used(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"),
                                 joint("j1", "base", "l1").replace(
                                     "</joint>", '<dynamics damping="0.5" friction="0.7"/></joint>'),
                                 extra='<robodyn_ros><joint name="j1" armature="0.25" coulomb_negative="1.5"/>'
                                       '</robodyn_ros>'))
    model = RobotModel.from_urdf(path)
    assert model.armature[0] == 0.25 and model.viscous[0] == 0.5
    # coulomb_positive falls back to <dynamics friction>, the negative one is overridden
    assert model.coulomb_positive[0] == 0.7 and model.coulomb_negative[0] == 1.5


def test_no_movable_joint(tmp_path):
    path = write(tmp_path, robot(link("base"), link("l1"), joint("j1", "base", "l1", kind="fixed", axis=None)))
    raises_naming(path, "no movable joint")


# ------------------------------------------------------------------ URDF conventions

def test_link_without_inertial_is_massless(tmp_path):
    # l1 has no <inertial>: the arm's mass is l2's only (no 1 kg invented, as some parsers do)
    path = write(tmp_path, two_link(l1=link("l1", inertial=False), l2=link("l2", m=2.5)))
    model = RobotModel.from_urdf(path)
    assert model.links[0].mass == 0.0
    assert sum(l.mass for l in model.links) == 2.5
    np.testing.assert_array_equal(model.links[0].inertia, np.zeros((3, 3)))


def test_continuous_is_revolute_without_position_limits(tmp_path):
    cont = RobotModel.from_urdf(write(tmp_path, two_link(j2=joint("j2", "l1", "l2", kind="continuous")), "c.urdf"))
    rev = RobotModel.from_urdf(write(tmp_path, two_link(), "r.urdf"))
    assert cont.joint_types == ["revolute", "revolute"]
    assert cont.lower[1] == -np.inf and cont.upper[1] == np.inf
    assert rev.lower[1] == -1.0 and rev.upper[1] == 1.0
    q = np.array([0.3, 5.0])                        # beyond the revolute limit: still computed
    np.testing.assert_array_equal(cont.inverse_dynamics(q, q, q), rev.inverse_dynamics(q, q, q))


def test_non_unit_axis_is_normalised_with_a_warning(tmp_path):
    unit = RobotModel.from_urdf(write(tmp_path, two_link(j2=joint("j2", "l1", "l2", axis="0.6 0 0.8")), "u.urdf"))
    path = write(tmp_path, two_link(j2=joint("j2", "l1", "l2", axis="3 0 4")), "n.urdf")
    with pytest.warns(UserWarning, match=r"j2.*not a unit vector") as record:
        scaled = RobotModel.from_urdf(path)
    assert str(path) in str(record[0].message)
    q = np.array([0.4, -0.7])
    np.testing.assert_allclose(scaled.inverse_dynamics(q, q, q), unit.inverse_dynamics(q, q, q), rtol=1e-14)
    np.testing.assert_allclose(scaled.link_frames(q)[-1], unit.link_frames(q)[-1], atol=1e-15)


def test_default_axis_is_x(tmp_path):
    # URDF's default axis is (1, 0, 0)
    none = RobotModel.from_urdf(write(tmp_path, two_link(j2=joint("j2", "l1", "l2", axis=None)), "a.urdf"))
    x = RobotModel.from_urdf(write(tmp_path, two_link(j2=joint("j2", "l1", "l2", axis="1 0 0")), "b.urdf"))
    q = np.array([0.4, -0.7])
    np.testing.assert_allclose(none.inverse_dynamics(q, q, q), x.inverse_dynamics(q, q, q), rtol=1e-14)


# ------------------------------------------------------------------ DH YAML errors

GOOD_LINK = dict(name="joint_1", joint="revolute", a=0.3, alpha=0.0, d=0.1, theta=0.0, mass=1.0,
                 com=[-0.15, 0.0, 0.0], inertia=[0.001, 0.01, 0.01])


def write_yaml(tmp_path, doc, name="arm_dh.yaml"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def yaml_raises(path, *fragments):
    with pytest.raises(ModelError) as info:
        RobotModel.from_yaml(path)
    message = str(info.value)
    assert str(path) in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


def with_link(**changes):
    spec = dict(GOOD_LINK)
    spec.update(changes)
    return dict(name="arm", links=[spec])


def test_good_yaml_loads(tmp_path):
    model = RobotModel.from_yaml(write_yaml(tmp_path, with_link()))
    assert model.dof == 1 and model.joint_names == ["joint_1"]


def test_malformed_yaml(tmp_path):
    yaml_raises(write_yaml(tmp_path, "links: [\n  - {a: 1\n"), "malformed YAML")


@pytest.mark.parametrize("doc", [{"name": "arm"}, {"links": {"a": 1}}, "- just\n- a list\n"])
def test_missing_links(tmp_path, doc):
    yaml_raises(write_yaml(tmp_path, doc), "'links'")


def test_unknown_top_level_key(tmp_path):
    doc = with_link()
    doc["gravitiy"] = [0, 0, -9.81]
    yaml_raises(write_yaml(tmp_path, doc), "gravitiy")


def test_unknown_link_key(tmp_path):
    yaml_raises(write_yaml(tmp_path, with_link(masss=2.0)), "link 1", "joint_1", "masss")


def test_bad_joint_type(tmp_path):
    yaml_raises(write_yaml(tmp_path, with_link(joint="spherical")), "link 1", "joint_1", "spherical")


@pytest.mark.parametrize("inertia", [[1.0, 2.0], [[1, 0], [0, 1]], [1, 2, 3, 4, 5]])
def test_bad_inertia_shape(tmp_path, inertia):
    yaml_raises(write_yaml(tmp_path, with_link(inertia=inertia)), "link 1", "inertia")


def test_asymmetric_inertia(tmp_path):
    yaml_raises(write_yaml(tmp_path, with_link(inertia=[[0.01, 0.002, 0], [0, 0.01, 0], [0, 0, 0.01]])),
                "joint_1", "not symmetric")


@pytest.mark.parametrize("coulomb", [[1.0, 2.0, 3.0], "sticky", -0.5])
def test_bad_coulomb(tmp_path, coulomb):
    yaml_raises(write_yaml(tmp_path, with_link(coulomb=coulomb)), "joint_1", "coulomb")


def test_negative_mass_yaml(tmp_path):
    yaml_raises(write_yaml(tmp_path, with_link(mass=-2.0)), "joint_1", "mass")


def test_bad_com_and_convention(tmp_path):
    yaml_raises(write_yaml(tmp_path, with_link(com=[0.1, 0.2])), "link 1", "com")
    doc = with_link()
    doc["convention"] = "craig"
    yaml_raises(write_yaml(tmp_path, doc, "c.yaml"), "craig")


def test_coulomb_forms(tmp_path):
    one = RobotModel.from_yaml(write_yaml(tmp_path, with_link(coulomb=0.8), "a.yaml"))
    two = RobotModel.from_yaml(write_yaml(tmp_path, with_link(coulomb=[0.8, 1.3]), "b.yaml"))
    assert (one.coulomb_positive[0], one.coulomb_negative[0]) == (0.8, 0.8)
    assert (two.coulomb_positive[0], two.coulomb_negative[0]) == (0.8, 1.3)
    # [for qd > 0, for qd < 0], and nothing at rest
    np.testing.assert_array_equal(two.friction_torques([[2.0], [-2.0], [0.0]]).ravel(), [0.8, -1.3, 0.0])


def test_triangle_inequality_warns_not_errors(tmp_path):
    path = write_yaml(tmp_path, with_link(inertia=[0.05, 0.01, 0.01]))    # 0.05 > 0.01 + 0.01
    with pytest.warns(UserWarning, match="triangle inequality"):
        model = RobotModel.from_yaml(path)
    assert model.dof == 1
    # a physical one does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RobotModel.from_yaml(write_yaml(tmp_path, with_link(), "ok.yaml"))


def test_inertia_forms_agree(tmp_path):
    full = [[0.02, 0.001, 0.002], [0.001, 0.03, 0.003], [0.002, 0.003, 0.04]]
    six = [0.02, 0.03, 0.04, 0.001, 0.003, 0.002]         # Ixx Iyy Izz Ixy Iyz Ixz
    a = RobotModel.from_yaml(write_yaml(tmp_path, with_link(inertia=full), "a.yaml"))
    b = RobotModel.from_yaml(write_yaml(tmp_path, with_link(inertia=six), "b.yaml"))
    np.testing.assert_array_equal(a.links[0].inertia, b.links[0].inertia)


def test_puma_data_set_warns_only_about_link_3_and_the_shipped_yaml_not_at_all(tmp_path):
    # the shipped YAML makes links 1 and 3 physical (its comment gives the data set's values)
    from pathlib import Path
    import yaml
    shipped = Path(__file__).resolve().parents[1] / "config/puma560_dh.yaml"
    spec = yaml.safe_load(shipped.read_text())
    spec["links"][0].update(mass=0.0, inertia=[0.0, 0.35, 0.0, 0.0, 0.0, 0.0])
    spec["links"][2]["inertia"] = [0.066, 0.086, 0.0125, 0.0, 0.0, 0.0]
    raw = tmp_path / "puma560_raw.yaml"
    raw.write_text(yaml.safe_dump(spec))
    messages = {}
    for path in (raw, shipped):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            RobotModel.from_yaml(path)
        messages[path] = [str(w.message) for w in record]
    assert len(messages[raw]) == 1, messages[raw]
    assert re.search(r"joint_3.*triangle inequality", messages[raw][0]), messages[raw]
    assert messages[shipped] == []


def test_zero_effort_limit_warns_that_no_limit_applies(tmp_path):
    """URDF parsers read a missing effort limit as 0; treating it as 0 N m would forbid motion and
    silently treating it as none would disable saturation: it is none, with a warning."""
    j2 = joint("j2", "l1", "l2").replace('effort="10"', 'effort="0"')
    path = write(tmp_path, two_link(j2=j2))
    with pytest.warns(UserWarning, match=r"arm\.urdf: joint 'j2': no effort limit"):
        model = RobotModel.from_urdf(path)
    assert model.effort_limit[0] == 10.0 and model.effort_limit[1] == np.inf
