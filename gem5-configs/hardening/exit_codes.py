"""What ``run.py``'s exit status says, read by run.py and by the runner.

gem5-free: the runner (``experiments/simulate.py``) names a failed run's
status with the same table run.py returns it from. 1 is left to gem5 itself
(an uncaught Python exception).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_GUEST_FAILED = 3
EXIT_KERNEL_PANIC = 4
EXIT_HUNG = 5
EXIT_UNEXPECTED = 6
EXIT_NO_DETAIL = 7
EXIT_STALLED = 8

MEANING: dict[int, str] = {
    EXIT_USAGE: "bad arguments or a feature this gem5 build lacks",
    EXIT_GUEST_FAILED: "the guest script failed",
    EXIT_KERNEL_PANIC: "the guest kernel panicked or oopsed",
    EXIT_HUNG: "tick limit reached: the guest hung or never ran m5 exit",
    EXIT_UNEXPECTED: "unexpected exit event",
    EXIT_NO_DETAIL: ("fast-forward run whose measured region did not run wholly on the "
                     "core model: the guest never asked for detail (bench_detail_begin), "
                     "or asked after the region began"),
    EXIT_STALLED: ("no CPU committed an instruction for a while inside the detailed part: "
                   "the model deadlocked (a simulator fault, not a result)"),
}
