"""robodyn_ros: model-based robot control for ROS 2.

Layers (arrows point down only): ``nodes`` (rclpy adapters) and ``cli`` over ``control``,
``stewart`` and ``dynamics``, none of which imports rclpy.
"""
__version__ = "0.1.0"
