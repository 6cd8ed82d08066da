"""Kernel time (pytest_overdub/render/sandbox/kerneltime.py) on plain subprocesses, no kernels: a process
is charged its CPU time and the time it sleeps, never the time it waits for a core on a busy machine.

Tolerances are generous (the counters tick every 10 ms, samples come every 50 ms) but far tighter than
what charging wall time would give: the spinner sharing one core with three hogs takes about four times
its CPU time in wall time.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys

import pytest

from pytest_overdub.render.sandbox.kerneltime import SLICE_S, KernelClock, read_stat

pytestmark = pytest.mark.skipif(read_stat(os.getpid()) is None, reason="needs /proc/<pid>/stat")

# Each says it is ready and waits for a line on stdin (so its start-up is not what is measured), does its
# work, prints, and waits for another line (nor its exit: a sandbox child waits for its next request).
READY = "import sys, time\nprint('ready', flush=True)\nsys.stdin.readline()\n"
DONE = "print('done', flush=True)\nsys.stdin.readline()\n"
SLEEPER = READY + "time.sleep(0.3)\n" + DONE
SPINNER = READY + "t = time.process_time()\nwhile time.process_time() - t < {cpu_s}:\n    pass\n" + DONE
HOG = "while True:\n    pass\n"


def start(code: str, *, cpus: set[int] | None = None) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    if cpus is not None:
        os.sched_setaffinity(proc.pid, cpus)
    return proc


def charged(proc: subprocess.Popen):
    """Tell ``proc`` to go and wait for its line as the scorer waits for a reply (sampling every slice);
    returns (the wait's charge, the wall seconds it took)."""
    assert proc.stdout.readline() == "ready\n"
    clock = KernelClock(proc.pid, parent_pid=os.getpid())
    clock.start()
    assert clock.mode == "cpu"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    wait = clock.wait(clock.last.at_s)
    while not select.select([proc.stdout], [], [], SLICE_S)[0]:
        wait.sample()
    assert proc.stdout.readline() == "done\n"
    charge = wait.done()
    wall_s = clock.last.at_s - wait.t0_s
    proc.stdin.close()
    proc.wait()
    return charge, wall_s


def test_a_sleeping_process_is_charged_its_sleep_and_no_cpu():
    charge, wall_s = charged(start(SLEEPER))
    # The first slice (no sample before it) and the stretch after the last sample are not charged asleep
    # (0.20 s near idle); a third slice of slack for a scorer that samples late on a busy machine.
    assert 0.3 - 3 * SLICE_S <= charge.asleep_s <= 0.3 + 0.02
    assert charge.cpu_s <= 0.03 and charge.wall_s == 0.0


def test_a_spinning_process_is_charged_its_cpu():
    charge, wall_s = charged(start(SPINNER.format(cpu_s=0.3)))
    assert 0.25 <= charge.cpu_s <= 0.38
    assert charge.asleep_s == 0.0


def test_a_spinner_sharing_a_core_with_hogs_is_charged_its_cpu_not_its_wall_time():
    core = {max(os.sched_getaffinity(0))}
    hogs = [start(HOG, cpus=core) for _ in range(3)]
    try:
        charge, wall_s = charged(start(SPINNER.format(cpu_s=0.4), cpus=core))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert wall_s >= 2 * 0.4  # the setting itself: waiting for the core took most of its wall time
    assert 0.34 <= charge.cpu_s <= 0.48  # what it did, not what it waited for
    assert charge.asleep_s == 0.0  # runnable is not asleep


def test_a_process_with_another_parent_is_charged_wall_time_and_says_why():
    proc = start(SLEEPER)
    try:
        clock = KernelClock(proc.pid, parent_pid=os.getpid() + 1)
        clock.start()
        assert clock.mode == "wall" and "names parent" in clock.why_wall
    finally:
        proc.kill()
        proc.wait()
    gone = KernelClock(proc.pid, parent_pid=os.getpid())
    gone.start()  # reaped: no /proc entry at all
    assert gone.mode == "wall" and "could not be read" in gone.why_wall
