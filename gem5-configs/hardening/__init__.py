"""gem5 components for the arm-hardening-gem5 experiments.

Modules here import ``m5`` and ``gem5`` and so run inside ``gem5.opt``, except
``catalog``, which is plain Python so that host-side tools can validate names
without starting the simulator.
"""
