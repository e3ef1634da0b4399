"""rclpy's ActionServer made to stand a flood of FollowJointTrajectory goals beside a control
cycle (trajectory_action.py serves the goals)."""
from __future__ import annotations

import gc

from rclpy.action import ActionServer

from .lifecycle import RCLError

#: goals taken from the middleware but not yet handled; one more is refused at once
MAX_PENDING_GOALS = 4
#: a goal's points freed at a time (between two, the cycle's thread may take the GIL)
RELEASED = 500


def release(trajectory) -> None:
    """A goal's points dropped once read, a few hundred at a time. The action server keeps a
    goal's request until its result expires; 10,000 points are some 50,000 Python objects, which
    every full garbage collection walks with the GIL held (a flood of goals: collections of
    hundreds of ms, as long a stop of the cycle's thread), and which freed at once hold it 7-10 ms."""
    points, trajectory.points = trajectory.points, []
    while points:
        del points[-RELEASED:]


class GoalServer(ActionServer):
    """rclpy's ActionServer, refusing at once a goal that arrives while MAX_PENDING_GOALS others
    wait to be handled. The executor converts every goal it takes into Python objects (50 ms for
    10,000 points) and queues its handling behind the next takes: under a flood of goals the
    converted goals piled up without bound (4 GB in the fuzzer's 90 s of goal floods).

    Its requests are handled in executor tasks, and rclpy 7.1's EventsExecutor ends the process
    (SIGSEGV, rclpy#1641) when a task raises: what rclpy lets out of handling a request is logged
    and the request dropped.

    No garbage collection runs while requests are taken and not yet handled: a collection
    during a goal's conversion, or before its handling released its points (``release``), walks
    its 50,000 young objects with the GIL held (10-100 ms)."""

    def __init__(self, *args, on_refused, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending, self._on_refused = 0, on_refused
        self._open = 0   # requests taken, not yet handled
        self._collecting = False   # whether the first of them found the collector on

    def take_data(self):
        if not self._open:   # the collector is off until they are all handled
            self._collecting = gc.isenabled()
            gc.disable()
        self._open += 1
        try:
            data = super().take_data()
        except BaseException:
            self._collect()
            raise
        if "goal" in data:
            if self._pending >= MAX_PENDING_GOALS:
                header, request = data.pop("goal")
                release(request.goal.trajectory)
                self._on_refused()
                try:  # accepted false, as rclpy answers a goal its callback rejected
                    self._handle.send_goal_response(
                        header, self._action_type.Impl.SendGoalService.Response())
                except RCLError:  # the client went away
                    pass
            else:
                self._pending += 1
        return data

    async def execute(self, taken_data):
        if "goal" in taken_data:
            self._pending -= 1
        try:
            await super().execute(taken_data)
        except Exception as exc:  # noqa: BLE001 - raised out of a task, it ends the process
            self._node.get_logger().error(f"action server: {exc!r} (request dropped)",
                                          throttle_duration_sec=2.0)
        finally:
            self._collect()

    def _collect(self) -> None:
        self._open = max(self._open - 1, 0)
        if not self._open and self._collecting:
            gc.enable()
