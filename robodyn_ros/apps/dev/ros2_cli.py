"""The real ``ros2`` command line and ``ros2 launch``, run as a user runs them, for the tests and
for ``robodyn-ros dev launch-under-load``.

- :func:`environment`: the environment the commands run in: the caller's DDS domain on loopback
  (required: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID), the venv's ``bin`` first
  on PATH and the venv on AMENT_PREFIX_PATH.
- :class:`Launch`: ``ros2 launch`` in a process group of its own, read from its log, and stopped
  as Ctrl-C in a terminal stops it: SIGINT to the whole group, twice; then every process it
  started must have exited 0, none left (ros2 launch's own exit is said, LAUNCH_ITSELF).
- :class:`Probe`: a node of the caller's own (its own rclpy context) that listens, calls services
  and reads parameters while the commands run.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections import deque
from pathlib import Path

BIN = Path(sys.executable).parent
PACKAGE = "robodyn_ros"
MARKER = Path("share", "ament_index", "resource_index", "packages", PACKAGE)
#: s: generous deadline for a launch or a command on a loaded 2-core machine (idle: ~5 s, ~1 s)
WAIT = 90.0
ASK_AGAIN = 10.0  # s: a service request unanswered this long is sent again (Probe.call)


def ros2_executable() -> str | None:
    """The venv's ``ros2``, else the one on PATH (a sourced ROS install)."""
    candidate = BIN / "ros2"
    return str(candidate) if candidate.is_file() else shutil.which("ros2")


def _prefixes(env) -> list[str]:
    return [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]


def environment(**overrides) -> dict[str, str]:
    """os.environ (ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE set by conftest) with the venv
    first on PATH and AMENT_PREFIX_PATH, unbuffered Python output and no colours in logs."""
    env = dict(os.environ)
    prefixes = _prefixes(env)
    if (Path(sys.prefix) / MARKER).is_file() and sys.prefix not in prefixes:
        prefixes.insert(0, sys.prefix)
    # PYTHONFAULTHANDLER: a process that hangs and is then aborted says where each thread stood
    env.update(AMENT_PREFIX_PATH=os.pathsep.join(prefixes),
               PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
               PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1", RCUTILS_COLORIZED_OUTPUT="0")
    assert env.get("ROS_AUTOMATIC_DISCOVERY_RANGE") == "LOCALHOST" and env.get("ROS_DOMAIN_ID"), \
        "DDS must stay on loopback in a domain of the caller's own (test/conftest.py sets both)"
    env.update(overrides)
    return env



# ---------------------------------------------------------------------------------- ros2 launch
#: ros2 launch itself, not a node, misbehaving at Ctrl-C: upstream (launch 3.4.x; its master has the
#: same run loop), said and not failed; doc/computed_torque_controller.md ("From the command line")
LAUNCH_ITSELF = ("ros2 launch {} after Ctrl-C, its nodes having exited 0: launch's known race when "
                 "SIGINT reaches it and its nodes at once (its idle run loop cancels the task "
                 "holding its Shutdown event, and launch_ros's ROS thread is never stopped)")
_STARTED = re.compile(r"\[INFO\] \[([\w.-]+)\]: process started with pid \[(\d+)\]")
_CLEAN = re.compile(r"\[INFO\] \[([\w.-]+)\]: process has finished cleanly \[pid (\d+)\]")
_DIED = re.compile(r"\[ERROR\] \[([\w.-]+)\]: process has died \[pid (\d+), exit code (-?\d+)")


#: A launch file starting only the non-Gazebo part of the Gazebo launch (``path`` formatted in):
#: our managed controller with that launch's parameters and bring-up (which it starts
#: once the effort controller is spawned), taken from its launch description as launch itself
#: would take them. Where Gazebo and ros2_control are not installed, this is what can run.
NON_GAZEBO_PART = '''
import importlib.util

from launch import LaunchDescription
from launch.actions import RegisterEventHandler
from launch_ros.actions import LifecycleNode


def generate_launch_description():
    spec = importlib.util.spec_from_file_location("gazebo_launch", {path!r})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ours = []
    for entity in module.generate_launch_description().entities:
        if isinstance(entity, RegisterEventHandler):
            actions = entity.event_handler.describe()[1]
            if any(isinstance(a, LifecycleNode) for a in actions):
                ours += actions
    assert ours, "no managed node in {path}"
    return LaunchDescription(ours)
'''


class Launch:
    """``argv`` (a ros2 launch command) running in its own process group, its output in ``log``."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None, cwd=None):
        self.argv, self.log = argv, log
        self._file = open(log, "wb")
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._file,
                                        stderr=subprocess.STDOUT, env=env or environment(),
                                        cwd=cwd, start_new_session=True,
                                        preexec_fn=_as_from_a_terminal)

    @classmethod
    def of(cls, launch_file: str, *arguments: str, log: Path, **kwargs) -> Launch:
        return cls([ros2_executable(), "launch", PACKAGE, launch_file, *arguments], log, **kwargs)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self, lines=40) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def wait_for_output(self, pattern: str, timeout=WAIT, spin=None) -> re.Match:
        """The first match of ``pattern`` in the output, polled (``spin``: what to do meanwhile,
        e.g. a probe's spin_once) until ``timeout``; fails with the output's tail."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.output())
            if match:
                return match
            if self.process.poll() is not None:
                raise AssertionError(f"launch ended (exit {self.process.returncode}) before "
                                     f"{pattern!r}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} in the launch output after {timeout} s:\n"
                                     f"{self.tail()}")
            spin() if spin else time.sleep(0.05)

    def started(self) -> dict[str, int]:
        """process name (as launch names it, e.g. arm_simulator-1) -> pid."""
        return {name: int(pid) for name, pid in _STARTED.findall(self.output())}

    def interrupt(self, spin=None, timeout=WAIT, linger: float = 15.0) -> int | None:
        """Ctrl-C as a terminal sends it: SIGINT to every process of the group (ros2 launch,
        without a terminal, forwards it once more to the processes it started), and once more
        when ros2 launch has taken the first. Then wait until every process it started has ended,
        and ros2 launch after them (``spin`` meanwhile). Returns ros2 launch's exit code, or None
        when it was still running ``linger`` s after its processes (it is then killed): see
        LAUNCH_ITSELF."""
        group = self.process.pid
        os.killpg(group, signal.SIGINT)
        try:
            self.wait_for_output(r"user interrupted with ctrl-c \(SIGINT\)", timeout, spin)
            os.killpg(group, signal.SIGINT)
        except (AssertionError, ProcessLookupError):
            pass  # already ended: what remains to be seen is how
        deadline, all_ended = time.monotonic() + timeout, None
        while self.process.poll() is None:
            if all_ended is None and set(self.exits()) >= set(self.started()):
                all_ended = time.monotonic()
            if all_ended is not None and time.monotonic() > all_ended + linger:
                self.kill()
                return None
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"processes still running {timeout} s after Ctrl-C:\n"
                                     f"{self.tail()}")
            spin() if spin else time.sleep(0.05)
        self._file.close()
        return self.process.returncode

    def exits(self) -> dict[str, int]:
        """process name -> exit code, for each process launch saw end."""
        text = self.output()
        ends = {name: 0 for name, _ in _CLEAN.findall(text)}
        ends.update({name: int(code) for name, _, code in _DIED.findall(text)})
        return ends

    def assert_clean_exit(self, returncode: int | None) -> None:
        """Every process ros2 launch started exited 0 and none is left; ros2 launch's own exit
        (``returncode``, from :meth:`interrupt`) is said when it is not 0 (LAUNCH_ITSELF)."""
        started, exits = self.started(), self.exits()
        assert started, f"launch started nothing:\n{self.tail()}"
        assert exits == {name: 0 for name in started}, \
            f"exit codes {exits} of {sorted(started)}:\n{self.tail()}"
        left = [f"{name} (pid {pid})" for name, pid in started.items() if alive(pid)]
        assert not left and not self.group_members(), \
            f"left running after Ctrl-C: {left or self.group_members()}"
        if returncode != 0:
            warnings.warn(LAUNCH_ITSELF.format(
                "was still running after its processes had ended (killed)" if returncode is None
                else f"exited {returncode}"))

    def group_members(self) -> list[int]:
        """Live processes of the launch's process group."""
        members = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, IndexError, ProcessLookupError):
                continue
            if fields[2] == str(self.process.pid) and fields[0] != "Z":
                members.append(int(stat.parent.name))
        return members

    def kill(self) -> None:
        """Teardown of last resort: SIGABRT to ros2 launch (its threads' stacks into the log),
        then SIGKILL to the group and to every process it started."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGABRT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for pid in [self.process.pid, *self.started().values()]:
            try:
                os.killpg(pid, signal.SIGKILL) if pid == self.process.pid else os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.process.wait(timeout=10)
        self._file.close()


def _as_from_a_terminal() -> None:
    """SIGINT and SIGTERM at their defaults in ros2 launch, as a terminal's shell starts it,
    whatever the caller ignores: a background job of a script (``cmd &``, nohup) ignores SIGINT,
    its children inherit that, and launch, which relies on the SIGINT handler Python installs
    only where SIGINT is not ignored, then ignored Ctrl-C: it ended only when its nodes did, and
    never while it waited for a node's answer (seen under launch-under-load)."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie of ours counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


# ---------------------------------------------------------------------------------- the probe
class Received:
    """One message as it arrived: ``time`` (monotonic), and ``msg`` read from its bytes when asked
    (a probe that deserialized 2,000 messages a second would load the machine it measures)."""

    __slots__ = ("time", "raw", "_type")

    def __init__(self, raw: bytes, msg_type):
        self.time, self.raw, self._type = time.monotonic(), raw, msg_type

    @property
    def msg(self):
        from rclpy.serialization import deserialize_message
        return deserialize_message(self.raw, self._type)


class Inbox(deque):
    """Received messages (the last ``maxlen``) and how many arrived (``total``)."""

    total = 0

    def __init__(self, msg_type, maxlen: int):
        super().__init__(maxlen=maxlen)
        self.msg_type = msg_type

    def take(self, raw: bytes) -> None:
        self.append(Received(raw, self.msg_type))
        self.total += 1

    def before(self, moment: float) -> Received:
        """The last message that arrived at or before ``moment`` (monotonic)."""
        return next(r for r in reversed(self) if r.time <= moment)


class Probe:
    """A node of the test's own, on its own rclpy context and EventsExecutor, spun by the test's
    thread: subscriptions collect messages, ``run`` runs a command while spinning."""

    def __init__(self, name: str = "probe"):
        import rclpy
        from rclpy.context import Context
        from rclpy.experimental import EventsExecutor
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(f"{name}_{os.getpid()}", context=self.context)
        self.executor = EventsExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.each_spin = []  # callables run at every spin (e.g. a publisher's next message)

    def subscribe(self, msg_type, topic: str, depth: int = 100, keep: int = 2000) -> Inbox:
        """The last ``keep`` messages on ``topic``, each with ``.time`` (monotonic, at arrival)
        and ``.msg``; ``.total`` counts them all."""
        inbox = Inbox(msg_type, keep)
        self.node.create_subscription(msg_type, topic, inbox.take, depth, raw=True)
        return inbox

    def spin_once(self) -> None:
        self.executor.spin_once(timeout_sec=0.02)
        for f in self.each_spin:
            f()

    def spin_until(self, condition, timeout: float = WAIT, what: str = "a condition"):
        deadline = time.monotonic() + timeout
        while not (result := condition()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            self.spin_once()
        return result

    def publish_until(self, publisher, msg, condition, what: str, every: float = 1.0):
        """Publish `msg` every `every` s until `condition()`: a writer that has matched a reader
        (get_subscription_count) may publish before the reader has matched it back, and the
        message is lost (volatile QoS); so may the answer on its way back to this node."""
        deadline = time.monotonic() + WAIT
        while True:
            publisher.publish(msg)
            try:
                return self.spin_until(condition, min(every, max(deadline - time.monotonic(), 0.0)),
                                       what)
            except AssertionError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"timed out after {WAIT} s waiting for {what}") from None

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin_once()

    def run(self, argv: list[str], timeout: float = WAIT, cwd=None, env=None,
            check: bool = True) -> subprocess.CompletedProcess:
        """``argv`` to its end, spinning meanwhile; its output as text. ``check``: fail on a
        non-zero exit, showing the output."""
        import tempfile
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                       cwd=cwd, env=env or environment())
            try:
                self.spin_until(lambda: process.poll() is not None, timeout, f"{argv} to end")
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            out.seek(0)
            err.seek(0)
            done = subprocess.CompletedProcess(argv, process.returncode,
                                               out.read().decode(errors="replace"),
                                               err.read().decode(errors="replace"))
        if check and done.returncode != 0:
            raise AssertionError(f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def call(self, srv_type, name: str, request, timeout: float = WAIT):
        """The answer of service ``name`` to ``request``, which is sent again every ASK_AGAIN s
        without one: a new client is ready once the server reads its requests, which may be
        before the server's answers reach it, and an answer sent then is lost (seen once in a
        full test run on a loaded machine: a get_state unanswered for 90 s). Queries and
        requests that set the same values again only."""
        client = self.node.create_client(srv_type, name)
        try:
            deadline = time.monotonic() + timeout
            self.spin_until(client.service_is_ready, timeout, f"service {name}")
            while True:
                future = client.call_async(request)
                again = min(time.monotonic() + ASK_AGAIN, deadline)
                self.spin_until(lambda: future.done() or time.monotonic() > again, timeout)
                if future.done():
                    return future.result()
                if time.monotonic() > deadline:
                    raise AssertionError(f"timed out after {timeout} s waiting for the answer "
                                         f"of {name}")
                client.remove_pending_request(future)
        finally:
            self.node.destroy_client(client)

    def lifecycle_state(self, node: str, timeout: float = WAIT) -> str:
        from lifecycle_msgs.srv import GetState
        return self.call(GetState, f"{node}/get_state", GetState.Request(),
                         timeout).current_state.label

    def parameters(self, node: str, names=None, timeout: float = WAIT) -> dict:
        """name -> value of ``node``'s parameters (all of them by default)."""
        from rcl_interfaces.srv import GetParameters, ListParameters
        from rclpy.parameter import parameter_value_to_python
        if names is None:
            names = self.call(ListParameters, f"{node}/list_parameters", ListParameters.Request(),
                              timeout).result.names
        answer = self.call(GetParameters, f"{node}/get_parameters",
                           GetParameters.Request(names=list(names)), timeout)
        return {n: _plain(parameter_value_to_python(v)) for n, v in zip(names, answer.values)}

    def set_parameters(self, node: str, **values):
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        request = SetParameters.Request(
            parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
        return self.call(SetParameters, f"{node}/set_parameters", request).results

    def wait_for_node(self, name: str, timeout: float = WAIT) -> None:
        """Until ``name`` (fully qualified) is in this probe's view of the graph."""
        self.spin_until(lambda: name in {ns.rstrip("/") + "/" + n for n, ns in
                                         self.node.get_node_names_and_namespaces()},
                        timeout, f"node {name}")

    def close(self) -> None:
        import rclpy
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


def _plain(value):
    return list(value) if not isinstance(value, (str, bytes)) and hasattr(value, "__len__") \
        else value
