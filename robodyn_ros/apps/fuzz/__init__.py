"""``robodyn-ros dev fuzz``: hostile inputs to the nodes over DDS while valid joint states flow (run),
the inputs themselves (inputs) and the process that watches the nodes' outputs (observer)."""
