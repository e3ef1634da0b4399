"""The bring-up a launch file gives a managed node (``nodes.launching.BringUp``), on real rclpy:
Ctrl-C while the node starts makes launch shut down and destroy its ROS node, with the bring-up's
clients, while the bring-up's thread still waits on them."""
import concurrent.futures
import logging
import threading
import time

import pytest
import rclpy

from robodyn_ros.nodes.launching import BringUp

from conftest import Q0

pytestmark = pytest.mark.usefixtures("ros")


def test_the_bring_up_ends_quietly_when_launch_destroys_its_node_meanwhile():
    """It made ros2 launch exit 1 ('cannot use Destroyable because destruction was requested')
    in one of six runs of launch-under-load stopped while the node compiled."""
    launch_node = rclpy.create_node("launch_like")
    shut_down = threading.Event()
    bring_up = BringUp(launch_node, "/not_started_yet", concurrent.futures.Future(), shut_down.is_set,
                       logging.getLogger("test"))
    raised = []

    def run():
        try:
            bring_up()
        except Exception as exc:   # noqa: BLE001 - what launch would have caught
            raised.append(exc)
    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.5)   # waiting for the node's change_state service
    shut_down.set()
    launch_node.destroy_node()
    thread.join(5.0)
    assert not thread.is_alive()
    assert raised == []


def test_the_bring_up_still_raises_what_is_not_a_shutdown():
    """An invalid handle while launch runs on is a fault of ours, not hidden."""
    launch_node = rclpy.create_node("launch_like_running")
    bring_up = BringUp(launch_node, "/not_started_either", concurrent.futures.Future(),
                       lambda: False, logging.getLogger("test"))
    launch_node.destroy_node()
    with pytest.raises(rclpy.exceptions.InvalidHandle):
        bring_up()


@pytest.mark.parametrize("activate", [False, True])
def test_the_bring_up_activates_only_when_told(rig, activate):
    """controller.launch.py's ``activate:=false`` (the spawner's ``--inactive``): launch configures
    the controller and leaves it inactive, commanding nothing while states arrive; by default it
    activates it. The bring-up runs in a thread, as launch runs it, against a real controller."""
    ctl = rig.controller(autostart=False, state_timeout=5.0)
    launch_node = rig.add(rclpy.create_node("launch_like_bring_up", namespace=rig.ns))
    bring_up = BringUp(launch_node, f"{rig.ns}/computed_torque_controller",
                       concurrent.futures.Future(), lambda: False, logging.getLogger("test"),
                       activate=activate)
    thread = threading.Thread(target=bring_up)
    thread.start()
    rig.spin_until(lambda: not thread.is_alive(), what="the bring-up")
    assert ctl._state_machine.current_state[1] == ("active" if activate else "inactive")
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")
    for _ in range(20):
        rig.publish_state(Q0)
        rig.spin_for(0.02)
    assert bool(rig.commands) == activate
