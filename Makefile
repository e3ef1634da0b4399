# One-command routes for a machine with Python >= 3.10 and no ROS install:
#   make demo   set up .venv and run the PUMA 560 computed-torque demo over real DDS
#   make test   set up .venv, lint (ruff, ruff.toml) and run the test suite
# DDS never leaves loopback: every target that may start rclpy runs with these two variables.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
DOMAIN   ?= 42
ROSENV   := ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$(DOMAIN)

.PHONY: venv demo test bench complexity clean

$(VENV)/.installed: setup.py package.xml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[ros,plot,test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(ROSENV) $(VENV)/bin/robodyn-ros demo

test: venv
	$(VENV)/bin/ruff check .
	$(ROSENV) $(PY) -m pytest -q test

bench: venv
	$(ROSENV) $(VENV)/bin/robodyn-ros bench

complexity: venv
	$(VENV)/bin/robodyn-ros complexity --dof 6

clean:
	rm -rf $(VENV) build install log out *.egg-info
