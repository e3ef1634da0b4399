"""The published Panda and UR5 (example-robot-data, from PyPI) as their makers ship them: check-urdf
reads both (UR's files declare their encoding, which once made it raise), and the controller, with
the per-driver parameter file of each, moves the arm behind a drive like the maker's on our engine
(the drive's model: the arm's masses x1.05), its joint names and limits as published, to rest where
the drive's 5 % more gravity puts it (a closed form)."""
import warnings

import numpy as np
import pytest
import yaml

from robodyn_ros.apps import check_urdf as check_urdf_command
from robodyn_ros.control import JointTrajectory
from robodyn_ros.control.drive import compensation_bits
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.loop import ControlLoop
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.plumbing.resources import find_share_file
from robodyn_ros.sim import make_engine
from robodyn_ros.sim.check_urdf import check
from robodyn_ros.sim.drive import attach_drive
from vendor_robots import robots_directory

ROBOTS = robots_directory()
DT = 1e-3
# (file, root, tip, the driver's parameter file, a start pose)
ARMS = [("panda_description/urdf/panda.urdf", "panda_link0", "panda_link8",
         "franka_controller.yaml", [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]),
        ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0",
         "ur_direct_torque_controller.yaml", [0.0, -1.2, 1.2, -1.5, -1.57, 0.0])]
KEYS = ("control_law", "friction", "effort_limits", "on_timeout", "drive_compensates",
        "effort_rate_limit")


@pytest.mark.parametrize("file, root, tip", [a[:3] for a in ARMS], ids=["panda", "ur5"])
def test_check_urdf_reads_the_published_file(file, root, tip, capsys):
    text = (ROBOTS / file).read_text(encoding="utf-8")
    assert check(text) == []   # every moving link has a mass and a physical inertia
    status = check_urdf_command.main([str(ROBOTS / file), "--root-link", root, "--tip-link", tip])
    assert status == 0 and "a simulator accepts it" in capsys.readouterr().out


@pytest.mark.parametrize("file, root, tip, config, start", ARMS, ids=["panda", "ur5"])
def test_the_controller_runs_the_published_arm_behind_its_drive(file, root, tip, config, start):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the fingers left out
        model = RobotModel.from_urdf(ROBOTS / file, root_link=root, tip_link=tip)
    values = yaml.safe_load(find_share_file(f"config/{config}").read_text())
    values = values["computed_torque_controller"]["ros__parameters"]
    order = JointOrder(model.joint_names, values["joints"])   # the maker's joint names
    settings = {k: values[k] for k in KEYS}
    settings.update(control_law="computed_torque", kp=100.0, kd=20.0)
    if model.dof != len(settings["effort_limits"]):
        settings["effort_limits"] = []   # the URDF's own
    t = [0.0]
    loop = ControlLoop(model, order, settings, 0.1, clock=lambda: t[0], steady=lambda: t[0])
    engine = make_engine("robodyn", model, DT)
    drive = attach_drive(engine, compensation_bits(values["drive_compensates"]),
                         np.full(model.dof, 1000.0), mass_scale=1.05)
    q, qd = order.to_chain(np.array(start)), np.zeros(model.dof)
    goal = q + 0.3
    for k in range(2500):
        loop.set_state(order.names, order.from_chain(q), order.from_chain(qd), stamp=t[0])
        if k == 1:
            zero = np.zeros((1, model.dof))
            assert loop.set_trajectory(JointTrajectory(list(order.names), np.array([1.5]),
                                                       order.from_chain(goal)[None], zero, zero))
        command = order.to_chain(loop.cycle().effort)
        q, qd = engine.step(q, qd, command)
        t[0] += DT
    # at rest, the command M Kp e (g taken off) plus the drive's 1.05 g balances g: the drive's
    # 5 % more gravity leaves the offset q - q_d = M⁻¹ (0.05 g) / Kp
    offset = np.linalg.solve(model.mass_matrix(q), 0.05 * model.gravity_torques(q)) / 100.0
    np.testing.assert_allclose(q - goal, offset, atol=2e-4)
    assert np.max(np.abs(offset)) > 1e-3   # an offset the check can see
    assert drive.violations == 0 and np.all(np.isfinite(q))
