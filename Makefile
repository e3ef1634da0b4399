# One-command routes for a machine with Python >= 3.10 and no ROS install:
#   make demo   set up .venv (the package and its compiled kernels) and run the PUMA 560
#               computed-torque demo over real DDS
#   make test   set up .venv (with DDS-Security when its source is at hand), lint (ruff, ruff.toml)
#               and run the test suite
#   make secure set up .venv with DDS-Security (SROS2): doc/security.md; make secure-demo runs
#               the demo with it
# DDS never leaves loopback: every target that may start rclpy runs with these two variables.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
DOMAIN   ?= 42
ROSENV   := ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$(DOMAIN)

# control_msgs is not on PyPI: where its source and build script are (a ROS machine has it from apt)
CONTROL_MSGS ?= ../shared/ros

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
                  $(wildcard robodyn_ros/dynamics/*.py robodyn_ros/stewart/*.py)
$(VENV)/.compiled: $(VENV)/.installed $(KERNEL_SOURCES)
	$(VENV)/bin/robodyn-ros compile
	touch $@

# Built into the venv once (about 3 min) when missing and the source is at hand; without it the
# controller runs with topics only and the tests that need it are skipped, saying why.
$(VENV)/.control_msgs: $(VENV)/.installed
	@if $(PY) -c "import control_msgs.action" 2>/dev/null; then touch $@; \
	elif [ -f $(CONTROL_MSGS)/build_control_msgs.sh ]; then \
	  echo "building control_msgs into $(VENV) (once, about 3 min)"; \
	  bash $(CONTROL_MSGS)/build_control_msgs.sh $(VENV) $(CONTROL_MSGS)/control_msgs_src $(VENV) \
	    --python-only --build-dir $(VENV)/build-control_msgs > $(VENV)/control_msgs_build.log 2>&1 \
	    || { tail -20 $(VENV)/control_msgs_build.log; exit 1; }; touch $@; \
	else echo "control_msgs: not installed and no source in $(CONTROL_MSGS) (make CONTROL_MSGS=DIR): \
	its tests are skipped"; fi

# launch, launch_ros, launch_testing and the ros2 CLI are not on PyPI: when they are missing, `make`
# installs them into the venv once (about 3 min) from their Jazzy sources if those are at hand
# (`make ROS_TOOLS=DIR`), then makes the venv an ament prefix that holds this checkout
# (robodyn_ros/apps/dev/ament_prefix.py), so that `.venv/bin/ros2 launch robodyn_ros ...` finds it. Without
# them the tests that need them are skipped, saying why.
ROS_TOOLS ?= ../shared/ros
$(VENV)/.ros_tools: $(VENV)/.installed $(wildcard launch/* config/* urdf/*)
	@if $(PY) -c "import ros2cli, ros2launch, launch_ros, launch_testing, composition_interfaces.srv" \
	  2>/dev/null; then :; \
	elif [ -f $(ROS_TOOLS)/install_ros_tools.sh ]; then \
	  echo "installing launch, launch_ros and the ros2 CLI into $(VENV) (once, about 3 min)"; \
	  bash $(ROS_TOOLS)/install_ros_tools.sh $(VENV) > $(VENV)/ros_tools_install.log 2>&1 \
	    || { tail -20 $(VENV)/ros_tools_install.log; exit 1; }; \
	else echo "ros2 CLI and launch: not installed and no source in $(ROS_TOOLS) (make ROS_TOOLS=DIR): \
	their tests are skipped"; exit 0; fi; \
	$(PY) -m robodyn_ros.apps.dev.ament_prefix $(VENV) && touch $@

# DDS-Security: the ros-jazzy-* wheels' Fast DDS has no security plugins, so the overlay (Fast DDS
# and rmw_fastrtps rebuilt with them, and sros2) is built into the venv once (10-13 min on 2 cores)
# when its script is at hand (`make SECURE_DDS=DIR`). `make test` builds it, `make demo` does not;
# without it the tests that need it are skipped, saying why. A ROS install needs none of this.
SECURE_DDS ?= ../shared/ros
$(VENV)/.secure_dds: $(VENV)/.installed $(VENV)/.ros_tools
	@if [ -f $(VENV)/secure_dds/secure_env.sh ] && $(PY) -c "import sros2.keystore" 2>/dev/null; \
	then touch $@; \
	elif [ -f $(SECURE_DDS)/build_secure_dds.sh ]; then \
	  echo "building DDS-Security into $(VENV)/secure_dds (once, 10-13 min on 2 cores)"; \
	  bash $(SECURE_DDS)/build_secure_dds.sh $(VENV) > $(VENV)/secure_dds_build.log 2>&1 \
	    || { tail -20 $(VENV)/secure_dds_build.log; exit 1; }; touch $@; \
	else echo "DDS-Security: not built and no build_secure_dds.sh in $(SECURE_DDS) \
	(make SECURE_DDS=DIR): its tests are skipped"; fi

secure: venv $(VENV)/.secure_dds

# The PUMA demo over DDS-Security, Enforce: a keystore of the package's enclaves for DOMAIN (keys
# serve one domain), every node in its enclave, this demo's process in /robodyn_ros/puma560_demo.
KEYSTORE ?= $(abspath $(VENV))/keystore_$(DOMAIN)
secure-demo: secure
	. $(VENV)/secure_dds/secure_env.sh && $(ROSENV) $(VENV)/bin/robodyn-ros security $(KEYSTORE) && \
	$(ROSENV) ROS_SECURITY_KEYSTORE=$(KEYSTORE) ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce \
	  ROS_SECURITY_ENCLAVE_OVERRIDE=/robodyn_ros/puma560_demo $(VENV)/bin/robodyn-ros demo puma

venv: $(VENV)/.installed $(VENV)/.compiled $(VENV)/.control_msgs $(VENV)/.ros_tools

# the demo needs neither control_msgs nor the ROS tools (its nodes run with topics only): a fresh
# clone reaches the table without their two builds
demo: $(VENV)/.installed $(VENV)/.compiled
	$(ROSENV) $(VENV)/bin/robodyn-ros demo puma

test: venv $(VENV)/.secure_dds
	$(VENV)/bin/ruff check .
	$(ROSENV) $(PY) -m pytest -q test

bench: venv
	$(ROSENV) $(VENV)/bin/robodyn-ros bench

complexity: venv
	$(VENV)/bin/robodyn-ros complexity --dof 6

clean:
	rm -rf $(VENV) build install log out *.egg-info
