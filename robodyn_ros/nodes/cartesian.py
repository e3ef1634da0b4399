"""What computed_torque_controller offers a task-space law (``operational_space``,
``cartesian_impedance``, or any law with ``set_target`` and ``clear_target``): Cartesian inputs,
the task frame's pose and twist, and the law's singularity figures on /diagnostics.

* ``~/target_pose`` (geometry_msgs/PoseStamped): track this pose of the task frame, at rest.
* ``~/target_wrench`` (geometry_msgs/WrenchStamped): the wrench [f; n] the task frame exerts
  (``cartesian_impedance`` only: ``set_wrench``; moment about the frame's origin).
* ``~/cartesian_trajectory`` (trajectory_msgs/MultiDOFJointTrajectory, ``joint_names`` = [the task
  frame]): poses with twists and accelerations at ``time_from_start`` after ``header.stamp`` (0:
  now), read as the Stewart platform reads its trajectory (``point_arrays``, ``PoseTrajectory``:
  linear between points, slerp for the orientation, at rest before the first and after the last)
  and sampled at every cycle at the state's stamp. As with joint_trajectory_controller, a first
  point later than 0 is reached from the pose commanded when the trajectory arrives.
* ``~/current_pose`` (PoseStamped) and ``~/current_twist`` (TwistStamped, [v; ω] of the frame's
  origin in the base frame): the task frame (the tip for a law without one) at every cycle,
  stamped with the state's stamp, while someone listens.

Every frame_id is the base frame, the URDF's root link of the chain (``root_link``, or the root of
the tree): an input's frame_id must be it or empty. An input while the law takes no Cartesian
target, a frame_id of another frame, a non-finite value or a quaternion whose norm is not 1 (within
QUATERNION_TOLERANCE) is refused with the reason (counted, throttled, /diagnostics) and changes
nothing, as is a pose the arm cannot reach: farther from the first joint's axis origin than the
sum of the link lengths (``reach``), or not reached within the joint limits by a damped
least-squares IK from the measured configuration (``solve``: IK_ITERATIONS iterations, then
IK_POINT_ITERATIONS from the previous solution for each trajectory point IK_SPACING or farther from
the last one solved, and the last point; refused with a residual above IK_POSITION_TOLERANCE or
IK_ORIENTATION_TOLERANCE). A joint trajectory (on the topic or a FollowJointTrajectory goal), a
joint reference or ``~/hold`` drops the Cartesian target (the law follows the joint reference again); a new law
object of a task-space law (a gain change) gets the target again, a law of another kind drops it.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from trajectory_msgs.msg import MultiDOFJointTrajectory

from ..control.inverse_kinematics import unreachable
from ..control.law import takes_target, task_link
from ..spatial.rotations import matrix_quaternion
from ..spatial.trajectory import PoseTrajectory, check_poses
from .common import point_arrays, stamp_seconds
from .cycle import post

QUATERNION_TOLERANCE = 1e-3
_ZERO6 = np.zeros(6)


def _xyz(v):
    return [v.x, v.y, v.z]


class CartesianInterface:
    """The module docstring's topics on ``node``, for the law of ``loop`` (it may change at run
    time). ``clock`` the node's (the loop's) clock; ``base`` and ``tip`` the chain's end links;
    ``lock`` the node's, which the cycle holds. The node calls ``before_cycle`` before each
    ``loop.cycle()`` and ``after_cycle`` after it (the cycle's thread); the inputs are checked
    on the executor's thread (the IK outside the lock) and given to the law under it."""

    def __init__(self, node, loop, clock, base: str, tip: str, lock):
        self._node, self._loop, self._clock, self.base, self.tip = node, loop, clock, base, tip
        self._lock = lock
        self._law = loop.law
        loop.on_joint_reference = self._forget
        self._goal = None         # (position, quaternion, twist, acceleration) as last set
        self._trajectory = None   # (PoseTrajectory, start on the clock)
        self._wrench = None
        for kind, topic, callback in ((PoseStamped, "~/target_pose", self._on_pose),
                                      (WrenchStamped, "~/target_wrench", self._on_wrench),
                                      (MultiDOFJointTrajectory, "~/cartesian_trajectory",
                                       self._on_trajectory)):
            node.subscribe(kind, topic, callback)  # kept by the node (ManagedNode._keep)
        self._pose_pub = node.create_publisher(PoseStamped, "~/current_pose", 10)
        self._twist_pub = node.create_publisher(TwistStamped, "~/current_twist", 10)
        self._pose, self._twist = PoseStamped(), TwistStamped()
        self._pose.header.frame_id = self._twist.header.frame_id = base
        self.listened = True   # whether anybody listens to the pose or the twist (``refresh``)

    def refresh(self) -> None:
        """Ask the graph whether anybody listens (once per diagnostics period, not per cycle:
        two subscription counts cost ~6 µs, a 1 kHz cycle's 0.6 % of a core)."""
        self.listened = bool(self._pose_pub.get_subscription_count()
                             or self._twist_pub.get_subscription_count())

    # ------------------------------------------------------------ inputs
    def _refuse(self, what, msg_frame) -> str:
        """Why the law or the frame refuses a ``what`` input, or ''."""
        if not takes_target(self._loop.law):
            return f"control_law {self._loop.config['control_law']} takes no Cartesian target"
        if msg_frame not in ("", self.base):
            return f"frame_id '{msg_frame}' is not the base frame '{self.base}' (or empty)"
        if self._loop.received is None:
            return f"{what} before the first valid joint state"
        return ""

    def _reject(self, what, reason):
        self._loop.reject(f"{what}: {reason}")

    def _on_pose(self, msg: PoseStamped):
        reason = self._refuse("target_pose", msg.header.frame_id)
        if not reason:
            p, o = msg.pose.position, msg.pose.orientation
            try:
                quaternion = check_poses(np.array([[p.x, p.y, p.z]]),
                                         np.array([[o.x, o.y, o.z, o.w]]), [np.zeros((1, 3))] * 4,
                                         QUATERNION_TOLERANCE)
            except ValueError as exc:
                reason = str(exc).removeprefix("point 0: ")
            else:
                position = np.array([p.x, p.y, p.z])
                reason = unreachable(self._loop.model, task_link(self._loop.law), self._loop.q,
                                     position[None], quaternion).removeprefix("point 0: ")
        if reason:
            return self._reject("target_pose", reason)
        self._trajectory = None
        self._set(position, quaternion[0], _ZERO6, _ZERO6)

    def _on_wrench(self, msg: WrenchStamped):
        reason = self._refuse("target_wrench", msg.header.frame_id)
        w = np.array(_xyz(msg.wrench.force) + _xyz(msg.wrench.torque))
        if not reason and not hasattr(self._loop.law, "set_wrench"):
            reason = (f"control_law {self._loop.config['control_law']} takes no wrench "
                      "(cartesian_impedance does)")
        if not reason and not np.isfinite(w).all():
            reason = f"not finite: {w.tolist()}"
        if reason:
            return self._reject("target_wrench", reason)
        with self._lock:
            self._wrench = w
            self._loop.law.set_wrench(w)

    def _on_trajectory(self, msg: MultiDOFJointTrajectory):
        names = self._frame_names()
        reason = self._refuse("cartesian_trajectory", msg.header.frame_id)
        if not reason and list(msg.joint_names) not in ([n] for n in names):
            reason = f"joint_names {msg.joint_names[:3]} must be one of [{names}] (the task frame)"
        if not reason and not 0 < len(msg.points) <= self._loop.max_trajectory_points:
            reason = (f"{len(msg.points)} points: 1 to max_trajectory_points "
                      f"{self._loop.max_trajectory_points}")
        if not reason:
            try:
                reason, trajectory, start = "", *self._read(msg)
            except ValueError as exc:
                reason = str(exc)
        if reason:
            return self._reject("cartesian_trajectory", reason)
        self._trajectory = (trajectory, start)
        self._node.get_logger().info(f"Cartesian trajectory of {len(msg.points)} point(s) "
                                     f"accepted, ends at t = {start + trajectory.duration:.3f} s")

    def _frame_names(self) -> list[str]:
        link = task_link(self._loop.law)
        return [link] if link not in (None, "tip") else ["tip", self.tip]

    def _read(self, msg):
        times = np.array([stamp_seconds(p.time_from_start, f"point {i} time_from_start")
                          for i, p in enumerate(msg.points)])
        positions, quaternions, rates = point_arrays(msg.points)
        quaternions = check_poses(positions, quaternions, rates, QUATERNION_TOLERANCE)
        reason = unreachable(self._loop.model, task_link(self._loop.law), self._loop.q,
                             positions, quaternions)
        if reason:
            raise ValueError(reason)
        if times[0] > 0.0:   # JTC: from the pose commanded now to the first point
            position, quaternion = self._commanded()
            times, positions = np.r_[0.0, times], np.vstack([position, positions])
            quaternions = np.vstack([quaternion, quaternions])
            rates = [np.vstack([np.zeros(3), r]) for r in rates]
        start = stamp_seconds(msg.header.stamp, "header.stamp") or self._clock()
        return PoseTrajectory(times, positions, quaternions, *rates), start

    def _commanded(self):
        """The target pose now: the trajectory's, the target's, or the joint reference's."""
        trajectory = self._trajectory   # once: the cycle's thread may end it meanwhile
        if trajectory is not None:
            s = trajectory[0].sample(self._clock() - trajectory[1])
            return s.position, s.quaternion
        if self._goal is not None:
            return self._goal[0], self._goal[1]
        q_d = self._loop.q if self._loop.reference is None else self._loop.reference[0]
        pose = self._loop.model.frame_pose(q_d, task_link(self._loop.law))
        return pose[:3, 3], matrix_quaternion(pose[:3, :3])

    def _set(self, position, quaternion, twist, acceleration):
        with self._lock:   # the cycle's (reentrant), or the executor's thread's from _on_pose
            self._goal = (position, quaternion, twist, acceleration)
            self._loop.law.set_target(position, quaternion, twist, acceleration)

    def _forget(self):
        """The loop dropped the law's target for a joint reference (a joint trajectory, a joint
        reference, a hold): no target to give a new law, no trajectory to sample."""
        self._goal = self._trajectory = None

    # ------------------------------------------------------------ the cycle
    @property
    def idle(self) -> bool:
        """before_cycle has nothing to do: the law is the one it last saw, and no Cartesian
        trajectory is sampled."""
        return self._loop.law is self._law and self._trajectory is None

    def before_cycle(self):
        law = self._loop.law
        if law is not self._law:   # a parameter change built a new law
            self._law = law
            if not takes_target(law):
                if self._goal is not None or self._wrench is not None:
                    post(self._node, self._node.get_logger().info, "the new control law takes "
                         "no Cartesian target: the Cartesian target is dropped")
                self._goal = self._trajectory = self._wrench = None
            else:
                if self._goal is not None:
                    law.set_target(*self._goal)
                if self._wrench is not None and hasattr(law, "set_wrench"):
                    law.set_wrench(self._wrench)
        if self._trajectory is not None:
            trajectory, start = self._trajectory
            t = (self._loop.stamp or self._clock()) - start
            s = trajectory.sample(t)
            self._set(s.position, s.quaternion, np.r_[s.linear_velocity, s.angular_velocity],
                      np.r_[s.linear_acceleration, s.angular_acceleration])
            if t > trajectory.duration:   # its last pose, at rest, is the target from now on
                self._trajectory = None

    def after_cycle(self, stamp):
        """The task frame's pose and twist at the state, stamped ``stamp`` (sec, nanosec), if
        someone listens."""
        if not self.listened:
            return
        pose, _, twist, _ = self._loop.model.frame_motion(self._loop.q, self._loop.qd,
                                                          task_link(self._loop.law))
        x, y, z, w = matrix_quaternion(pose[:3, :3])
        for header in (self._pose.header, self._twist.header):
            header.stamp.sec, header.stamp.nanosec = stamp
        p, o = self._pose.pose.position, self._pose.pose.orientation
        p.x, p.y, p.z = pose[:3, 3].tolist()
        o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
        v, r = self._twist.twist.linear, self._twist.twist.angular
        v.x, v.y, v.z, r.x, r.y, r.z = twist.tolist()
        self._pose_pub.publish(self._pose)
        self._twist_pub.publish(self._twist)

    def report(self) -> dict:
        """/diagnostics values: the law's singularity figures and what it tracks."""
        law = self._loop.law
        if not takes_target(law):
            return {}
        values = dict(law.diagnostics()) if hasattr(law, "diagnostics") else {}
        values["cartesian target"] = ("trajectory" if self._trajectory is not None
                                      else "pose" if self._goal is not None
                                      else "forward kinematics of the joint reference")
        return values

    def destroy(self):
        self._node.destroy_publisher(self._pose_pub)
        self._node.destroy_publisher(self._twist_pub)
