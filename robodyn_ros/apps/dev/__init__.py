"""Maintainers' tools: our interfaces built, the generated sections of the doc pages, the launch
files under load, and the nodes under hostile input and in service for an hour."""
from ..commands import dispatch

SUMMARY = "maintainers' tools"
COMMANDS = {
    "build-interfaces": ("robodyn_ros.apps.dev.build_interfaces", "build interfaces/control_msgs "
                         "into the venv from the ROS 2 wheels (make does, where no ROS install "
                         "has it)"),
    "perf-page": ("robodyn_ros.apps.dev.perf_page", "doc/performance.md's figures from a bench JSON"),
    "param-tables": ("robodyn_ros.apps.dev.param_tables", "the doc/ pages' parameter tables from "
                     "the schemas"),
    "launch-under-load": ("robodyn_ros.apps.dev.launch_load", "every launch file under ros2 launch "
                          "beside a compile, empty and full cache: started, stopped, timed"),
    "fuzz": ("robodyn_ros.apps.fuzz.run", "hostile inputs to the nodes over DDS while valid "
             "joint states flow at 1 kHz"),
    "soak": ("robodyn_ros.apps.soak", "the controller for an hour as in service: states at "
             "1 kHz, a goal every 2 s; memory, CPU, threads, files, gaps, outcomes per minute"),
}


def main(argv) -> int:
    return dispatch("robodyn-ros dev", __doc__, COMMANDS, argv)
