"""The nodes' SROS2 enclaves (doc/security.md): each node of the package runs in
``/robodyn_ros/<its name>`` with what the shipped policy (config/robodyn_ros.policy.xml) grants it,
and the policy read as DDS reads the permissions sros2 makes of it (:func:`permissions`), for the
test that every node keeps to its enclave. No sros2 and no rclpy here: the launch files and
``robodyn-ros security`` (apps/security.py, the keystore) use it."""
from __future__ import annotations

import fnmatch
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from ..plumbing.resources import find_share_file

POLICY = "config/robodyn_ros.policy.xml"
#: every enclave of the package is /robodyn_ros/<the node's name>
ENCLAVES = "/robodyn_ros/"


def security_missing() -> str:
    """Why DDS-Security cannot run here, or '' when it can: sros2 must import (the keystore) and
    the Fast DDS that rmw_fastrtps loads must carry its security plugins. A ROS 2 install has
    both; the ros-jazzy-* wheels of the pip route have neither (their Fast DDS is built without
    security, which refuses an enclave with "This Fast DDS version doesn't have the security
    libraries"). The plugins are looked for as Fast DDS names its authentication plugin."""
    if importlib.util.find_spec("sros2") is None:
        return "sros2 is not importable: DDS-Security needs a ROS 2 install (doc/security.md)"
    folders = [*os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep), f"{sys.prefix}/lib",
               *(f"{p}/lib" for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep))]
    libraries = [lib for folder in folders if folder and Path(folder).is_dir()
                 for lib in Path(folder).glob("libfast[dr]*.so*") if lib.name.startswith(
                     ("libfastrtps.so", "libfastdds.so")) and not lib.is_symlink()]
    if not libraries:
        return "no Fast DDS library (libfastrtps / libfastdds) on the library path"
    if not any(b"builtin.PKI-DH" in lib.read_bytes() for lib in libraries):
        return (f"the Fast DDS here ({libraries[0]}) has no security plugins: the ros-jazzy-* "
                "wheels' is built without them; a ROS 2 install's has them (doc/security.md)")
    return ""


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
