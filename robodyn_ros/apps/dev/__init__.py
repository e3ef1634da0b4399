"""``robodyn-ros dev``: maintainers' tools, which build our interfaces, write the generated sections of
the doc pages and try the launch files under load."""
from ..commands import dispatch

COMMANDS = {
    "build-interfaces": ("robodyn_ros.apps.dev.build_interfaces", "build interfaces/control_msgs "
                         "into the venv from the ROS 2 wheels (make does, where no ROS install "
                         "has it)"),
    "perf-page": ("robodyn_ros.apps.dev.perf_page", "doc/performance.md's figures from a bench JSON"),
    "param-tables": ("robodyn_ros.apps.dev.param_tables", "the doc/ pages' parameter tables from "
                     "the schemas"),
    "launch-under-load": ("robodyn_ros.apps.dev.launch_load", "every launch file under ros2 launch "
                          "beside a compile, empty and full cache: started, stopped, timed"),
}


def main(argv) -> int:
    return dispatch("robodyn-ros dev", __doc__, COMMANDS, argv)
