"""``robodyn-ros dev``: maintainers' tools, which write the generated sections of the doc pages."""
from ..commands import dispatch

COMMANDS = {
    "perf-page": ("robodyn_ros.apps.dev.perf_page", "doc/performance.md's figures from a bench JSON"),
    "param-tables": ("robodyn_ros.apps.dev.param_tables", "the doc/ pages' parameter tables from "
                     "the schemas"),
}


def main(argv) -> int:
    return dispatch("robodyn-ros dev", __doc__, COMMANDS, argv)
