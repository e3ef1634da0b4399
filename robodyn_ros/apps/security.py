"""A DDS-Security keystore holding every enclave of the package, each with the permissions the
shipped policy (config/robodyn_ros.policy.xml) grants it, made with sros2's Python API; it prints
the environment a secured node needs (doc/security.md).

The same as ros2 security create_keystore KEYSTORE followed by ros2 security generate_artifacts
-k KEYSTORE -p robodyn_ros.policy.xml. The keys carry the ROS_DOMAIN_ID they are made for.
"""
from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from ..nodes.security import POLICY, enclave
from ..plumbing.resources import find_share_file


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros security", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("keystore", type=Path, metavar="KEYSTORE", help="the keystore directory (made if missing; "
                        "an existing keystore gets the enclaves added or renewed)")
    parser.add_argument("--also", type=Path, nargs="+", default=[], metavar="POLICY",
                        help="policies of your own (your nodes' enclaves) made into the same "
                        "keystore")
    return parser.parse_args(argv)


def protect_private_keys(keystore: Path) -> list[Path]:
    """Make every private key of ``keystore`` (each enclave's key.pem, the CAs' keys in private/)
    readable and writable by its owner only, as ssh keeps its keys: sros2 writes them with the
    umask's mode (0644 by default), and whoever reads an enclave's key.pem *is* that enclave,
    whoever reads the CA's key can sign any permissions. The keys protected, in order."""
    keys = sorted(k for k in {*keystore.glob("enclaves/**/key.pem"), *keystore.glob("private/*")}
                  if k.is_file())
    for key in keys:
        key.chmod(stat.S_IRUSR | stat.S_IWUSR)
    private = keystore / "private"
    if private.is_dir():
        private.chmod(stat.S_IRWXU)
    return keys


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
        print(f"robodyn-ros security: sros2 is not importable ({exc}): it comes with a ROS 2 "
              "install (apt install ros-jazzy-sros2), which DDS-Security needs anyway "
              "(doc/security.md)", file=sys.stderr)
        return 1
    path = args.keystore.resolve()
    if not keystore.is_valid_keystore(path):
        if path.exists() and any(path.iterdir()):
            print(f"robodyn-ros security: {path} is not empty and no keystore", file=sys.stderr)
            return 2
        keystore.create_keystore(path)
    policies = [policy, *(extra.resolve() for extra in args.also)]
    generate_artifacts(path, [], policies)
    protected = protect_private_keys(path)
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    made = sorted(keystore.get_enclaves(path))
    print(f"keystore {path}: {len(made)} enclaves from {', '.join(map(str, policies))} for "
          f"ROS_DOMAIN_ID={domain} (keys made for one domain serve only that one)\n  "
          + "\n  ".join(made))
    print(f"{len(protected)} private keys made readable by their owner only (0600; private/ 0700)")
    print("\nfor every shell that starts nodes:\n"
          f"export ROS_SECURITY_KEYSTORE={path} ROS_SECURITY_ENABLE=true "
          f"ROS_SECURITY_STRATEGY=Enforce ROS_DOMAIN_ID={domain}\n"
          f"# ros2 launch: ROS_SECURITY_ENCLAVE_OVERRIDE={enclave('launcher')} ros2 launch ...\n"
          f"# the command line: export ROS_SECURITY_ENCLAVE_OVERRIDE={enclave('operator')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
