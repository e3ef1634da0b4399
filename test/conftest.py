"""Test-wide setup. DDS must stay on loopback and on a domain of this run's own, so both variables
are set here, before any test module can import rclpy."""
import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# A domain per test process: concurrent runs on one machine must not hear each other.
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)
