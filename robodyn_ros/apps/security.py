"""``robodyn-ros security KEYSTORE``: a DDS-Security keystore holding every enclave of the package,
each with the permissions the shipped policy (config/robodyn_ros.policy.xml) grants it, made with
sros2's Python API; it prints the environment a secured node needs (doc/security.md).

The same as ``ros2 security create_keystore KEYSTORE`` followed by ``ros2 security
generate_artifacts -k KEYSTORE -p robodyn_ros.policy.xml``. The keys carry ``ROS_DOMAIN_ID``.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..nodes.security import POLICY, enclave
from ..plumbing.resources import find_share_file


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros security", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("keystore", type=Path, help="the keystore directory (made if missing; "
                        "an existing keystore gets the enclaves added or renewed)")
    parser.add_argument("--also", type=Path, nargs="+", default=[], metavar="POLICY",
                        help="policies of your own (your nodes' enclaves) made into the same "
                        "keystore")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else list(argv))
    policy = find_share_file(POLICY).resolve()
    for extra in args.also:
        if not extra.is_file():
            print(f"robodyn-ros security: policy {extra} does not exist", file=sys.stderr)
            return 2
    try:
        from sros2 import keystore
        from sros2.api._artifact_generation import generate_artifacts
    except ImportError as exc:
        print(f"robodyn-ros security: sros2 is not importable ({exc}). On a ROS install: apt "
              "install ros-jazzy-sros2; on the pip route: make secure (doc/security.md)", file=sys.stderr)
        return 1
    path = args.keystore.resolve()
    if not keystore.is_valid_keystore(path):
        if path.exists() and any(path.iterdir()):
            print(f"robodyn-ros security: {path} is not empty and no keystore", file=sys.stderr)
            return 2
        keystore.create_keystore(path)
    policies = [policy, *(extra.resolve() for extra in args.also)]
    generate_artifacts(path, [], policies)
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    made = sorted(keystore.get_enclaves(path))
    print(f"keystore {path}: {len(made)} enclaves from {', '.join(map(str, policies))} for "
          f"ROS_DOMAIN_ID={domain} (keys made for one domain serve only that one)\n  "
          + "\n  ".join(made))
    print("\nfor every shell that starts nodes (and, on the pip route, "
          ". .venv/secure_dds/secure_env.sh first):\n"
          f"export ROS_SECURITY_KEYSTORE={path} ROS_SECURITY_ENABLE=true "
          f"ROS_SECURITY_STRATEGY=Enforce ROS_DOMAIN_ID={domain}\n"
          f"# the command line: export ROS_SECURITY_ENCLAVE_OVERRIDE={enclave('operator')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
