"""Homogeneous transforms and the rotation helpers the loaders and the URDF exporter share."""
import math

import numpy as np


def rot_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def homogeneous(rotation=None, translation=None):
    T = np.eye(4)
    if rotation is not None:
        T[:3, :3] = rotation
    if translation is not None:
        T[:3, 3] = translation
    return T


def rpy_to_matrix(rpy):
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    roll, pitch, yaw = rpy
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def matrix_to_rpy(R):
    """URDF roll-pitch-yaw of a rotation matrix, the inverse of ``rpy_to_matrix``."""
    cos_pitch = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], cos_pitch)
    if cos_pitch > 1e-12:
        return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])
    # Gimbal lock: only roll - yaw (or roll + yaw) is defined; put it all in roll.
    return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0


def rotation_taking_z_to(axis):
    """A rotation Q with Q e_z = axis (unit), so that a joint about any axis becomes a joint about z."""
    axis = np.asarray(axis, dtype=float)
    z = np.array([0.0, 0.0, 1.0])
    c = float(axis @ z)
    if c > 1.0 - 1e-15:
        return np.eye(3)
    if c < -1.0 + 1e-15:
        return rot_x(np.pi)
    v = np.cross(z, axis)
    s = np.linalg.norm(v)
    k = v / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
