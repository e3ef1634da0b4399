"""What DDS-Security costs the 1 kHz loop: the latency benchmark's driver and controller
(``benchmarks.latency``: a stamped JointState every millisecond, the controller answering each with
its command; latency = the command's arrival - the state's publication) run with security off and
under Enforce, alternately, in one run, on the same libraries (a ROS install's Fast DDS, built
with security, used without it); then the 004 §5 demo at 1 kHz (``demo.run_once``) under Enforce, each
node in its enclave, against the 004 bound.

    source /opt/ros/jazzy/setup.bash     # DDS-Security needs a ROS 2 install (doc/security.md)
    python -m robodyn_ros.apps.benchmarks.secure_loop [--duration 15] [--rounds 2] [--json FILE]

The keystore (a temporary one) is the shipped policy's plus one enclave of this benchmark's own,
``/robodyn_ros_bench/driver``, from a policy of its own given to ``robodyn-ros security --also``:
how a user extends the policy for a node of theirs (doc/security.md). Under Enforce every message is
signed and encrypted (AES-GCM, the sros2 governance: ENCRYPT) and the shared-memory transport
still carries it, encrypted.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ...nodes.security import security_missing
from ..processes import NodeProcesses, loopback_dds

DRIVER = "/robodyn_ros_bench/driver"
_SECURITY = ("ROS_SECURITY_ENABLE", "ROS_SECURITY_STRATEGY", "ROS_SECURITY_KEYSTORE",
             "ROS_SECURITY_ENCLAVE_OVERRIDE")


def driver_policy() -> str:
    """The benchmark driver's enclave (benchmarks/latency.py's node): a user's policy, with what
    every rclpy node needs written out as in the shipped one."""
    services = "".join(f"<service>~/{name}</service>" for name in (
        "describe_parameters", "get_parameter_types", "get_parameters", "list_parameters",
        "set_parameters", "set_parameters_atomically", "get_type_description"))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="{DRIVER}">
      <profiles>
        <profile ns="/" node="bench_joint_state_driver">
          <topics publish="ALLOW"><topic>/rosout</topic><topic>/parameter_events</topic></topics>
          <topics subscribe="ALLOW"><topic>/clock</topic></topics>
          <services reply="ALLOW">{services}</services>
          <topics publish="ALLOW"><topic>/joint_states</topic></topics>
          <topics subscribe="ALLOW">
            <topic>/effort_controller/commands</topic>
            <topic>/computed_torque_controller/controller_state</topic>
            <topic>/diagnostics</topic>
          </topics>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
"""


def make_keystore(folder: Path) -> Path:
    """The package's enclaves and the driver's (``robodyn-ros security KEYSTORE --also``)."""
    extra = folder / "bench.policy.xml"
    extra.write_text(driver_policy())
    keystore = folder / "keystore"
    subprocess.run([sys.executable, "-m", "robodyn_ros.apps.security", str(keystore),
                    "--also", str(extra)], check=True, stdout=subprocess.DEVNULL)
    return keystore


def _security(keystore: Path | None, enclave: str | None = None):
    """This process's environment: security off (None), or Enforce with ``keystore``."""
    for key in _SECURITY:
        os.environ.pop(key, None)
    if keystore is not None:
        os.environ.update(ROS_SECURITY_ENABLE="true", ROS_SECURITY_STRATEGY="Enforce",
                          ROS_SECURITY_KEYSTORE=str(keystore))
        if enclave:
            os.environ["ROS_SECURITY_ENCLAVE_OVERRIDE"] = enclave


def latency_round(keystore, duration, logs: Path) -> dict:
    """One latency run (benchmarks.latency's driver and controller), secured if ``keystore``."""
    from ...nodes.controller import NAME
    from ...plumbing.resources import find_share_file
    from .latency import _drive, _latency
    params = {"urdf_file": find_share_file("urdf/puma560.urdf"), "rate": 0.0,
              "state_timeout": 0.5, "friction": "false"}
    _security(keystore)
    with NodeProcesses(logs) as procs:   # each node in its enclave
        procs.start(NAME, "robodyn_ros.nodes.controller", params)
        _security(keystore, DRIVER)   # the driver's context, created by _drive
        measured = _drive(procs, duration)[NAME]
    _security(None)
    figures = _latency(measured.pop("latency_ms"))
    return {**figures, "controller_cpu_percent": measured["controller_cpu_percent"],
            "controller_cycle_us_mean": measured["node_cycle_us_mean"]}


def demo_run(keystore, logs: Path) -> dict:
    """The 004 §5 motion at 1 kHz, every node secured when ``keystore``."""
    from ...plumbing.resources import find_share_file
    from ..demos import puma as demo
    from ..demos.arm_loop import BOUND
    from ..processes import run_all
    from ...nodes.security import enclave
    _security(keystore, enclave("puma560_demo"))
    try:   # NodeProcesses starts each node in its enclave
        (result,) = run_all("robodyn_secure_demo_", [(1000.0,)], lambda logs, rate: demo.run_once(
            find_share_file("urdf/puma560.urdf"), rate, 0.0, 3.0, logs))
    finally:
        _security(None)
    worst = max(result["max_error_rad"].values())
    return {"max_error_rad": worst, "bound_rad": BOUND, "below_bound": result["below_bound"],
            "realtime_factor": result["realtime_factor"], "samples": result["samples"],
            "missing_samples": result["missing_samples"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robodyn_ros.apps.benchmarks.secure_loop",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=15.0, help="s per latency run")
    parser.add_argument("--rounds", type=int, default=2, help="off/Enforce pairs")
    parser.add_argument("--no-demo", action="store_true", help="skip the secured demo run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    missing = security_missing()
    if missing:
        print(f"secure_loop: {missing}", file=sys.stderr)
        return 2
    loopback_dds()
    os.environ.setdefault("PYTHONWARNINGS", "ignore")   # sros2 0.13 and cryptography 44
    from ..dynamics import warm_up
    warm_up()
    runs = {"off": [], "Enforce": []}
    with tempfile.TemporaryDirectory(prefix="robodyn_secure_loop_") as folder:
        folder = Path(folder)
        keystore = make_keystore(folder)
        for _ in range(args.rounds):
            for label, ks in (("off", None), ("Enforce", keystore)):
                runs[label].append(latency_round(ks, args.duration, folder))
                r = runs[label][-1]
                print(f"  {label:8s} p50 {r['latency_ms']['median']:.3f} ms, p99 "
                      f"{r['latency_ms']['p99']:.3f} ms, max {r['latency_ms']['max']:.3f} ms, "
                      f"missed {r['missed_percent']:.2f} %, controller CPU "
                      f"{r['controller_cpu_percent']:.1f} %", flush=True)
        demo_result = None if args.no_demo else demo_run(keystore, folder)
    summary = {"duration_s": args.duration, "rounds": args.rounds, "runs": runs,
               "secured_demo_1khz": demo_result}
    print(f"\n{'ROS_SECURITY':14s}{'p50 ms':>9s}{'p99 ms':>9s}{'max ms':>9s}{'missed %':>10s}"
          f"{'ctrl CPU %':>12s}   (median over {args.rounds} runs of {args.duration:g} s, 1 kHz)")
    for label, rows in runs.items():
        med = {k: float(np.median([r["latency_ms"][k] for r in rows]))
               for k in ("median", "p99", "max")}
        print(f"{label:14s}{med['median']:9.3f}{med['p99']:9.3f}{med['max']:9.3f}"
              f"{np.median([r['missed_percent'] for r in rows]):10.2f}"
              f"{np.median([r['controller_cpu_percent'] for r in rows]):12.1f}")
    if demo_result:
        print(f"\nsecured demo at 1 kHz (004 §5): max |e| {demo_result['max_error_rad']:.2e} rad, "
              f"bound {demo_result['bound_rad']:.2e} rad: "
              f"{'below' if demo_result['below_bound'] else 'NOT below'}, real-time factor "
              f"{demo_result['realtime_factor']:.2f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
