"""Robot descriptions in every form they come in (robodyn_ros.dynamics.description): files, strings
and bytes in any declared encoding, and .xacro files expanded with xacro and its arguments, through
RobotModel.from_urdf and through the nodes' urdf_file / xacro_args / robot_description parameters.

The arm's names are not ASCII ("épaule", "coude_ü"), so that a description decoded with the wrong
encoding either fails or yields other joint names: equal names prove the decoding. Errors name the
file and what is wrong.
"""
import codecs

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.dynamics.description import read_description
from robodyn_ros.nodes.common import ConfigurationError
from vendor_robots import robots_directory

JOINTS = ["épaule", "coude_ü"]
Q = np.array([0.4, -1.1])


def arm(declaration="", length=0.5, mass=2.0, name="bras_à_deux_segments"):
    """A planar two-link arm; ``declaration`` is its first line."""
    def segment(joint, parent, child, z):
        return (f'  <link name="{child}"><inertial><origin xyz="{length / 2} 0 0"/>'
                f'<mass value="{mass}"/><inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" '
                f'iyz="0" ixz="0"/></inertial></link>\n'
                f'  <joint name="{joint}" type="revolute"><origin xyz="0 0 {z}"/>'
                f'<parent link="{parent}"/><child link="{child}"/><axis xyz="0 1 0"/>'
                f'<limit lower="-3" upper="3" effort="50" velocity="2"/>'
                f'<dynamics damping="0.5" friction="0.25"/></joint>\n')
    return (f'{declaration}\n<robot name="{name}">\n  <link name="base"/>\n'
            + segment(JOINTS[0], "base", "bras", 0.3) + segment(JOINTS[1], "bras", "avant-bras", length)
            + "</robot>\n")


def same_model(model, reference):
    assert model.joint_names == reference.joint_names
    assert model.name == reference.name
    np.testing.assert_array_equal(model.mass_matrix(Q), reference.mass_matrix(Q))
    np.testing.assert_array_equal(model.gravity_torques(Q), reference.gravity_torques(Q))
    np.testing.assert_array_equal(model.friction_torques(Q), reference.friction_torques(Q))


REFERENCE = RobotModel.from_urdf(arm())
# (declared encoding, how the bytes are made)
ENCODINGS = [
    ("utf-8", lambda text: text.encode("utf-8")),
    ("UTF-8", lambda text: codecs.BOM_UTF8 + text.encode("utf-8")),
    ("ISO-8859-1", lambda text: text.encode("latin-1")),
    ("latin-1", lambda text: text.encode("latin-1")),
    ("windows-1252", lambda text: text.encode("cp1252")),
    ("UTF-16", lambda text: text.encode("utf-16")),                 # with its byte-order mark
    ("UTF-16", lambda text: text.encode("utf-16-be")),              # none: told by "<?"
    ("UTF-32", lambda text: text.encode("utf-32")),
]
ENCODING_IDS = ["utf-8", "utf-8-bom", "iso-8859-1", "latin-1", "cp1252", "utf-16-bom",
                "utf-16be-unmarked", "utf-32"]


@pytest.mark.parametrize("encoding,encode", ENCODINGS, ids=ENCODING_IDS)
def test_file_bytes_and_string_in_a_declared_encoding(tmp_path, encoding, encode):
    text = arm(f'<?xml version="1.0" encoding="{encoding}"?>')
    data = encode(text)
    if "8859" in encoding or "latin" in encoding or "1252" in encoding:
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")          # the case is real: read as UTF-8 it would fail
    path = tmp_path / "arm.urdf"
    path.write_bytes(data)
    same_model(RobotModel.from_urdf(path), REFERENCE)
    same_model(RobotModel.from_urdf(str(path)), REFERENCE)
    same_model(RobotModel.from_urdf(data), REFERENCE)
    same_model(RobotModel.from_urdf(bytearray(data)), REFERENCE)
    # as a str the text is already decoded: the declaration is moot, and must not be refused
    same_model(RobotModel.from_urdf(text), REFERENCE)


def test_undeclared_bytes_are_utf8(tmp_path):
    data = arm('<?xml version="1.0"?>').encode("utf-8")
    same_model(RobotModel.from_urdf(data), REFERENCE)
    same_model(RobotModel.from_urdf(arm().encode("utf-8")), REFERENCE)


def test_the_text_handed_on_has_no_declaration_and_keeps_its_lines(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>')
                     .encode("latin-1"))
    source, text = read_description(path)
    assert source == str(path)
    assert text.splitlines() == arm("").splitlines()


# ------------------------------------------------------------------------------- bad encodings

def raises_naming(description, *fragments, **kwargs):
    with pytest.raises(ModelError) as info:
        RobotModel.from_urdf(description, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert str(fragment) in message, f"{fragment!r} not in {message!r}"
    return message


def test_undeclared_latin1_names_the_file_and_line(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0"?>').encode("latin-1"))
    line = next(i for i, row in enumerate(arm('<?xml version="1.0"?>').splitlines(), 1)
                if "à" in row)
    raises_naming(path, path, f"line {line}", "utf-8", "encoding=")


def test_unknown_encoding_names_the_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0" encoding="klingon"?>').encode("ascii", "replace"))
    raises_naming(path, path, "klingon")


def test_declared_utf16_in_single_bytes_names_the_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0" encoding="UTF-16"?>').encode("utf-8"))
    raises_naming(path, path, "UTF-16", "byte-order mark")


def test_element_errors_in_a_declared_file_name_the_file_and_the_element(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0" encoding="ISO-8859-1"?>', mass=-1.0)
                     .encode("latin-1"))
    raises_naming(path, path, "link 'bras' <inertial>", "mass")


def test_malformed_xml_after_a_declaration_keeps_its_line_number(tmp_path):
    lines = arm('<?xml version="1.0" encoding="utf-8"?>').splitlines()
    lines[4] = lines[4].replace("<joint ", "<joint <")       # line 5
    path = tmp_path / "arm.urdf"
    path.write_bytes("\n".join(lines).encode("utf-8"))
    raises_naming(path, path, "malformed XML", "line 5")


def test_missing_file_and_wrong_type():
    raises_naming("/nonexistent/arm.urdf", "/nonexistent/arm.urdf", "cannot read")
    raises_naming(42, "path, XML text or bytes", "int")


# ------------------------------------------------------------------------------------------- xacro

PARTS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="joint parent child z length mass">
    <link name="${child}"><inertial><origin xyz="${length / 2} 0 0"/><mass value="${mass}"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" iyz="0" ixz="0"/></inertial></link>
    <joint name="${joint}" type="revolute"><origin xyz="0 0 ${z}"/>
      <parent link="${parent}"/><child link="${child}"/><axis xyz="0 1 0"/>
      <limit lower="-3" upper="3" effort="50" velocity="2"/>
      <dynamics damping="0.5" friction="0.25"/></joint>
  </xacro:macro>
</robot>
"""
ARM_XACRO = """<?xml version="1.0" encoding="utf-8"?>
<robot name="bras_à_deux_segments" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.5"/>
  <xacro:arg name="mass" default="2.0"/>
  <xacro:property name="L" value="$(arg length)"/>
  <xacro:include filename="parts.xacro"/>
  <link name="base"/>
  <xacro:segment joint="épaule" parent="base" child="bras" z="0.3" length="${L}"
                 mass="$(arg mass)"/>
  <xacro:segment joint="coude_ü" parent="bras" child="avant-bras" z="${L}" length="${L}"
                 mass="$(arg mass)"/>
</robot>
"""


@pytest.fixture
def xacro_arm(tmp_path):
    (tmp_path / "parts.xacro").write_text(PARTS)
    path = tmp_path / "arm.urdf.xacro"
    path.write_bytes(ARM_XACRO.encode("utf-8"))
    return path


def test_xacro_file_with_arguments(xacro_arm):
    same_model(RobotModel.from_urdf(xacro_arm), REFERENCE)          # the defaults
    longer = RobotModel.from_urdf(arm(length=0.7, mass=3.0))
    for args in (["length:=0.7", "mass:=3.0"], {"length": 0.7, "mass": 3}):
        same_model(RobotModel.from_urdf(xacro_arm, xacro_args=args), longer)
    # the arguments matter: the two arms differ
    assert not np.allclose(longer.gravity_torques(Q), REFERENCE.gravity_torques(Q))


def test_xacro_errors_name_the_file(xacro_arm, tmp_path):
    raises_naming(xacro_arm, "length=0.7", "name:=value", xacro_args=["length=0.7"])
    raises_naming(tmp_path / "none.urdf.xacro", "none.urdf.xacro", "no such file")
    (tmp_path / "parts.xacro").unlink()
    raises_naming(xacro_arm, xacro_arm, "parts.xacro", "No such file")
    needs_arg = tmp_path / "needs.xacro"
    needs_arg.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                         '<link name="$(arg base)"/></robot>')
    raises_naming(needs_arg, needs_arg, "$(arg base)", "xacro_args")
    undefined = tmp_path / "undefined.xacro"
    undefined.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                         '<link name="${no_such_property}"/></robot>')
    raises_naming(undefined, undefined, "no_such_property")
    unknown_package = tmp_path / "find.xacro"
    unknown_package.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                               '<xacro:include filename="$(find no_such_package)/a.xacro"/>'
                               '</robot>')
    # (what xacro says depends on the ament index at hand; the file is named either way)
    raises_naming(unknown_package, unknown_package, "xacro failed")


def test_xacro_args_for_what_is_not_xacro_are_refused(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(arm())
    raises_naming(path, path, "not a .xacro file", xacro_args=["length:=0.7"])
    raises_naming(arm(), "not a .xacro file", xacro_args=["length:=0.7"])


def test_a_vendor_xacro_macro_included_and_called(tmp_path):
    """example-robot-data's hector quadrotor macro (by absolute path) under an arm of ours: the
    expansion equals Pinocchio's reading of xacro's output, and xacro's warning reaches us."""
    macro = robots_directory() / "hector_description/robots/quadrotor_base.urdf.xacro"
    path = tmp_path / "drone_arm.xacro"
    path.write_text(f"""<robot name="drone_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="{macro}"/>
  <xacro:quadrotor_base_macro/>
  <link name="arm"><inertial><origin xyz="0.1 0 -0.05"/><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.003" ixy="0" iyz="0" ixz="0"/></inertial></link>
  <joint name="arm_joint" type="revolute"><origin xyz="0 0 -0.1"/><parent link="base_link"/>
    <child link="arm"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/>
  </joint>
</robot>""")
    with pytest.warns(UserWarning, match="xacro: .*pi"):
        model = RobotModel.from_urdf(path)
    with pytest.warns(UserWarning, match="xacro: .*pi"):
        _, text = read_description(path)
    p = pin.buildModelFromXML(text)
    p.gravity.linear = model.gravity
    data = p.createData()
    q, qd, qdd = np.array([0.3]), np.array([-0.7]), np.array([1.5])
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd, friction=False),
                               pin.rnea(p, data, q, qd, qdd), rtol=0, atol=1e-14)
    assert model.joint_names == ["arm_joint"]


# ------------------------------------------------------------------------- through the nodes
# (the rig fixture of conftest.py: real nodes in the default context; nothing needs to flow)

def test_node_loads_a_xacro_urdf_file_with_xacro_args(rig, xacro_arm):
    node = rig.controller(urdf_file=str(xacro_arm), xacro_args=["length:=0.7", "mass:=3.0"])
    same_model(node.model, RobotModel.from_urdf(arm(length=0.7, mass=3.0)))
    assert node.params["xacro_args"] == ["length:=0.7", "mass:=3.0"]


def test_node_loads_declared_encodings_from_file_and_parameter(rig, tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(arm('<?xml version="1.0" encoding="ISO-8859-1"?>').encode("latin-1"))
    same_model(rig.controller(urdf_file=str(path)).model, REFERENCE)
    text = arm('<?xml version="1.0" encoding="utf-8"?>')
    same_model(rig.controller(robot_description=text).model, REFERENCE)


def test_node_description_errors_are_configuration_errors_naming_the_file(rig, xacro_arm):
    with pytest.raises(ConfigurationError, match="name:=value"):
        rig.controller(urdf_file=str(xacro_arm), xacro_args=["length"])
    (xacro_arm.parent / "parts.xacro").unlink()
    with pytest.raises(ConfigurationError, match=f"{xacro_arm}.*parts.xacro"):
        rig.controller(urdf_file=str(xacro_arm))
    with pytest.raises(ConfigurationError, match="robot_description is not URDF XML"):
        rig.controller(robot_description="arm.urdf")


def test_shipped_descriptions_are_found_from_any_directory(tmp_path, monkeypatch):
    # issue 46: RobotModel.from_urdf("urdf/puma560.urdf") worked only inside the checkout
    import warnings
    from pathlib import Path

    from robodyn_ros.dynamics import shipped
    checkout = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    assert shipped("puma560").read_bytes() == (checkout / "urdf" / "puma560.urdf").read_bytes()
    assert shipped("puma560_dh.yaml").read_bytes() == (checkout / "config" / "puma560_dh.yaml").read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the PUMA data's link-3 inertia
        by_uri = RobotModel.from_urdf("package://robodyn_ros/urdf/puma560.urdf")
        by_path = RobotModel.from_urdf(checkout / "urdf" / "puma560.urdf")
    np.testing.assert_array_equal(by_uri.params, by_path.params)
    with pytest.raises(FileNotFoundError, match="puma560, .*stanford"):
        shipped("puma")
    with pytest.raises(ModelError, match="no_such.urdf"):
        RobotModel.from_urdf("package://robodyn_ros/urdf/no_such.urdf")
