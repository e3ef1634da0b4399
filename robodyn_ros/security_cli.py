"""``robodyn-ros security KEYSTORE``: a DDS-Security keystore holding every enclave of the package,
each with the permissions the shipped policy (config/robodyn_ros.policy.xml) grants it, made with
sros2's Python API; it prints the environment a secured node needs (doc/security.md).

The same as ``ros2 security create_keystore KEYSTORE`` followed by ``ros2 security
generate_artifacts -k KEYSTORE -p robodyn_ros.policy.xml``. The keys carry ``ROS_DOMAIN_ID``.

Also here, without sros2: the policy read as DDS reads the permissions sros2 makes of it
(:func:`permissions`), for the test that every node keeps to its enclave.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from .resources import find_share_file

POLICY = "config/robodyn_ros.policy.xml"
#: every enclave of the package is /robodyn_ros/<the node's name>
ENCLAVES = "/robodyn_ros/"


def enclave(node: str) -> str:
    """The enclave of the package's node named ``node``."""
    return ENCLAVES + node


@dataclass(frozen=True)
class Grant:
    """What one enclave may do, as DDS topic names (``rt/`` topics, ``rq/...Request`` and
    ``rr/...Reply`` of services): the ``publish`` and ``subscribe`` lists of its permissions.xml.
    Patterns (``*``) match as DDS-Security matches them (fnmatch)."""
    publish: frozenset
    subscribe: frozenset

    def may(self, kind: str, dds_topic: str) -> bool:
        """Whether ``kind`` ('publish' or 'subscribe') of ``dds_topic`` is granted."""
        return any(fnmatch.fnmatchcase(dds_topic, p) for p in getattr(self, kind))


def _resolve(name: str, ns: str, node: str) -> str:
    """A policy name as sros2 resolves it: absolute as is, ``~/x`` in the node, else in ``ns``."""
    ns = ns if ns.endswith("/") else ns + "/"
    if name.startswith("/"):
        return name
    return ns + node + name[1:] if name.startswith("~") else ns + name


#: per rule of a profile ((element, attribute) -> (what it publishes, what it subscribes)), the
#: DDS topics of one name, as sros2's permissions.xsl writes them
_ACTION = ("/_action/cancel_goal", "/_action/get_result", "/_action/send_goal")
_RULES = {
    ("topics", "publish"): lambda f: ([f"rt{f}"], []),
    ("topics", "subscribe"): lambda f: ([], [f"rt{f}"]),
    ("services", "reply"): lambda f: ([f"rr{f}Reply"], [f"rq{f}Request"]),
    ("services", "request"): lambda f: ([f"rq{f}Request"], [f"rr{f}Reply"]),
    ("actions", "execute"): lambda f: (
        [f"rr{f}{s}Reply" for s in _ACTION] + [f"rt{f}/_action/feedback", f"rt{f}/_action/status"],
        [f"rq{f}{s}Request" for s in _ACTION]),
    ("actions", "call"): lambda f: (
        [f"rq{f}{s}Request" for s in _ACTION],
        [f"rr{f}{s}Reply" for s in _ACTION] + [f"rt{f}/_action/feedback", f"rt{f}/_action/status"]),
}


def permissions(path: Path | None = None) -> dict[str, Grant]:
    """Enclave path -> its Grant, from the policy at ``path`` (default: the shipped one). Only
    ALLOW rules are read (this policy has no DENY, no XInclude); ValueError names the element of
    another kind."""
    path = Path(path) if path is not None else find_share_file(POLICY)
    grants = {}
    for element in ElementTree.parse(path).getroot().iter("enclave"):
        publish, subscribe = set(), set()
        for profile in element.iter("profile"):
            ns, node = profile.get("ns", "/"), profile.get("node", "")
            for rule in profile:
                for attribute, value in rule.attrib.items():
                    key = (rule.tag, attribute)
                    if key not in _RULES or value != "ALLOW":
                        raise ValueError(f"{path}: enclave {element.get('path')}, node {node}: "
                                         f"<{rule.tag} {attribute}={value!r}> is not read here")
                    for name in rule:
                        pub, sub = _RULES[key](_resolve(name.text.strip(), ns, node))
                        publish.update(pub)
                        subscribe.update(sub)
        grants[element.get("path")] = Grant(frozenset(publish), frozenset(subscribe))
    return grants


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
