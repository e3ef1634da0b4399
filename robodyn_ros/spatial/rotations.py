"""Orientation helpers: the paper's RPY convention (eq. 38), RPY rates to base-frame angular velocity
and acceleration, quaternions (for ROS messages), and the rotation exponential (for FK updates).

Angles are ordered theta = (theta_x, theta_y, theta_z) as in the paper's trajectories, and
R = Rot(Z, theta_z) Rot(Y, theta_y) Rot(X, theta_x). Every function takes one angle triple (3,) or a
batch (N, 3).
"""
import numpy as np


def rpy_matrix(theta):
    """R = Rz(theta_z) Ry(theta_y) Rx(theta_x), eq. (38)."""
    theta = np.asarray(theta, dtype=float)
    cx, cy, cz = np.cos(theta[..., 0]), np.cos(theta[..., 1]), np.cos(theta[..., 2])
    sx, sy, sz = np.sin(theta[..., 0]), np.sin(theta[..., 1]), np.sin(theta[..., 2])
    R = np.empty(theta.shape[:-1] + (3, 3))
    R[..., 0, 0] = cz * cy
    R[..., 0, 1] = cz * sy * sx - sz * cx
    R[..., 0, 2] = cz * sy * cx + sz * sx
    R[..., 1, 0] = sz * cy
    R[..., 1, 1] = sz * sy * sx + cz * cx
    R[..., 1, 2] = sz * sy * cx - cz * sx
    R[..., 2, 0] = -sy
    R[..., 2, 1] = cy * sx
    R[..., 2, 2] = cy * cx
    return R


def _rpy_axes(theta):
    """Base-frame directions of the three rates: e_z, Rz e_y, Rz Ry e_x."""
    theta = np.asarray(theta, dtype=float)
    cy, cz = np.cos(theta[..., 1]), np.cos(theta[..., 2])
    sy, sz = np.sin(theta[..., 1]), np.sin(theta[..., 2])
    zero, one = np.zeros_like(cz), np.ones_like(cz)
    ez = np.stack([zero, zero, one], axis=-1)
    ey = np.stack([-sz, cz, zero], axis=-1)
    ex = np.stack([cz * cy, sz * cy, -sy], axis=-1)
    return ex, ey, ez


def rpy_angular_velocity(theta, theta_dot):
    """omega = thz' e_z + thy' Rz e_y + thx' Rz Ry e_x, in the base frame."""
    ex, ey, ez = _rpy_axes(theta)
    td = np.asarray(theta_dot, dtype=float)
    return td[..., 0:1] * ex + td[..., 1:2] * ey + td[..., 2:3] * ez


def rpy_angular_acceleration(theta, theta_dot, theta_ddot):
    """alpha = d(omega)/dt: the axis e_y turns with thz' e_z, the axis Rz Ry e_x with
    thz' e_z + thy' Rz e_y."""
    ex, ey, ez = _rpy_axes(theta)
    td = np.asarray(theta_dot, dtype=float)
    tdd = np.asarray(theta_ddot, dtype=float)
    w_z = td[..., 2:3] * ez
    w_zy = w_z + td[..., 1:2] * ey
    return (tdd[..., 0:1] * ex + tdd[..., 1:2] * ey + tdd[..., 2:3] * ez
            + td[..., 1:2] * np.cross(w_z, ey) + td[..., 0:1] * np.cross(w_zy, ex))


def quaternion_matrix(q):
    """Rotation matrix of a unit quaternion (x, y, z, w), the geometry_msgs order."""
    x, y, z, w = (np.asarray(q, dtype=float)[..., i] for i in range(4))
    R = np.empty(np.shape(x) + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def matrix_quaternion(R):
    """Unit quaternion (x, y, z, w) of one rotation matrix (Shepperd's method: stable for all R)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    i = int(np.argmax([R[0, 0], R[1, 1], R[2, 2], tr]))
    if i == 3:
        w = 0.5 * np.sqrt(1.0 + tr)
        q = [(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
             (R[1, 0] - R[0, 1]) / (4 * w), w]
    else:
        j, k = (i + 1) % 3, (i + 2) % 3
        v = np.empty(3)
        v[i] = 0.5 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        v[j] = (R[j, i] + R[i, j]) / (4 * v[i])
        v[k] = (R[k, i] + R[i, k]) / (4 * v[i])
        w = (R[k, j] - R[j, k]) / (4 * v[i])
        q = [v[0], v[1], v[2], w]
    q = np.array(q)
    return q if q[3] >= 0 else -q


def exp_so3(phi):
    """Rotation by the vector phi (Rodrigues)."""
    phi = np.asarray(phi, dtype=float)
    angle = np.linalg.norm(phi)
    K = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    if angle < 1e-8:  # second-order series: exact to double precision here
        return np.eye(3) + K + 0.5 * K @ K
    return (np.eye(3) + np.sin(angle) / angle * K
            + (1.0 - np.cos(angle)) / angle**2 * K @ K)


def log_so3(R):
    """The rotation vector phi with exp_so3(phi) = R, |phi| in [0, pi]: through the unit quaternion
    (w >= 0), whose vector part has length sin(|phi|/2), stable at every angle."""
    q = matrix_quaternion(R)
    s = np.linalg.norm(q[:3])
    if s < 1e-12:
        return 2.0 * q[:3]   # sin(x) = x to double precision here
    return 2.0 * np.arctan2(s, q[3]) / s * q[:3]
