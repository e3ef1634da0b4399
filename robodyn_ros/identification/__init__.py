"""Identification of a serial arm's dynamic parameters from a recorded run (no rclpy here).

τ = Y(q, q̇, q̈) π: ``regressor`` gives Y for every model the package loads, ``standard_parameters``
π of a model (per moving body the 10 standard parameters, then per joint its drive parameters),
``with_parameters`` the model of a π.
"""
from ..dynamics.inertial_parameters import (DRIVE_COLUMNS, parameter_names, standard_parameters,
                                            with_parameters)
from ..dynamics.regressor import regressor

__all__ = ["DRIVE_COLUMNS", "parameter_names", "regressor", "standard_parameters", "with_parameters"]
