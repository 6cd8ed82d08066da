"""Sandbox overhead: an echo kernel on 20 s of stereo, in the sandbox versus in-process.

Prints, per device (build + one whole-track ``process`` + close), the median and best time of each
mode over interleaved repeats and their difference, plus the one-off cold start of the fork server (a
child has no clock, so no breakdown of its own). A device on its own (outside a kernel session)
gets a fresh child; then the same for devices built one after another in one kernel session, as a
scoring builds them: each takes a fresh child, and the first also pays the session's determinism check
(its probe run twice, the second time in one more child).

Then, end to end, the time to score each device task's oracle (every probe render, sandboxed, cold
stem cache) against the same with kernels trusted in-process, as medians of interleaved repeats (target:
under 2 s each, sandboxed), and the issue's own reading of the overhead: the difference of the two
medians over the number of song-defined devices the scoring builds (target: at most 10 ms per device on
the device-dotted-echo oracle), and the median over repeats of each sandboxed scoring minus the trusted
one run right after it, per device (the same figure, less moved by the machine's slow spells). A
sandboxed scoring is one kernel session: its devices share a child, and the server makes its next spare
child when the session ends, in the pause after each scoring here (the scorer's own work between tasks
in a real run); the CPU all the sandbox's processes spent, per sandboxed scoring, is printed too, and the
kernel time the scoring's kernels were charged (what its budget counts: their CPU time and sleep) and the
wall time they took (what its backstop counts).

``--no-determinism-check`` leaves the session's determinism check out (each device's 0.2 s probe run
twice, the second time in one more child), so two runs give what the check and the fresh child per
device each cost.

Run: ``python bench/sandbox_speed.py [--repeats 15] [--no-determinism-check]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub.render.kernels import build_kernel_device  # noqa: E402
from pytest_overdub.render.sandbox import fork_server, kernel_session  # noqa: E402

SR = 48000
ECHO = {
    "id": "bench.dotted-echo", "kind": "effect", "name": "Dotted echo", "version": 1,
    "params": [{"key": "beats", "label": "time", "min": 0.125, "max": 4, "def": 0.75, "unit": "beats"},
               {"key": "feedback", "label": "feedback", "min": 0, "max": 0.95, "def": 0.35, "unit": ""},
               {"key": "mix", "label": "mix", "min": 0, "max": 1, "def": 0.5, "unit": ""}],
    "kernel": (
        "def process(x, params, ctx):\n"
        "    line = ctx.state.get('line')\n"
        "    if line is None:\n"
        "        line = ctx.state['line'] = dsp.FeedbackDelay(channels=2)\n"
        "    wet = line.process(x, delay_frames=params['beats'] * ctx.beat_s * ctx.sr,\n"
        "                       feedback=params['feedback'])\n"
        "    return x + params['mix'] * wet\n"),
}


def one_device(x: np.ndarray, *, trusted: bool) -> tuple[float, float, np.ndarray, object]:
    """Wall time and the scorer's CPU time of build + one whole-track call + close."""
    t0, c0 = time.perf_counter(), time.process_time()
    dev = build_kernel_device(ECHO, sr=SR, tempo_bpm=120.0, seed=1, trusted=trusted)
    y = dev.process(x)
    dev.close()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, y, dev


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--no-determinism-check", action="store_true")
    args = ap.parse_args()
    from pytest_overdub import runtime

    runtime.enter("bench")  # time renders as the scorer runs them (malloc tuning, the process stem cache)
    if args.no_determinism_check:
        from pytest_overdub.render.sandbox import client

        client.SandboxedKernel.check_determinism = lambda self: None
    x = np.random.default_rng(0).standard_normal((2, int(args.seconds * SR))) * 0.1

    t0 = time.perf_counter()
    server = fork_server()
    cold = time.perf_counter() - t0
    one_device(x, trusted=True)  # warm both paths (stdlib import, pool allocation, first spare)
    one_device(x, trusted=False)

    local, boxed, local_cpu, boxed_cpu = [], [], [], []
    for _ in range(args.repeats):
        t, c, y_local, _ = one_device(x, trusted=True)
        local.append(t)
        local_cpu.append(c)
        time.sleep(0.2)  # the server readies the next spare child while the engine would be rendering
        t, c, y_boxed, dev = one_device(x, trusted=False)
        boxed.append(t)
        boxed_cpu.append(c)
        time.sleep(0.2)
    assert np.array_equal(y_local, y_boxed), "sandbox and in-process audio differ"

    med_l, med_b = statistics.median(local), statistics.median(boxed)
    print(f"echo kernel, {args.seconds:g} s stereo at {SR} Hz, {args.repeats} interleaved repeats; "
          "a device on its own (outside a kernel session: a fresh child each)")
    print(f"  fork server cold start:   {cold * 1e3:8.1f} ms (once per scorer process; pid {server.pid})")
    print(f"  in-process per device:    median {med_l * 1e3:7.1f} ms   best {min(local) * 1e3:7.1f} ms")
    print(f"  sandboxed per device:     median {med_b * 1e3:7.1f} ms   best {min(boxed) * 1e3:7.1f} ms")
    print(f"  load average at the end:  {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (wall times are noisy under load)")
    print(f"  sandbox overhead:         median {(med_b - med_l) * 1e3:7.1f} ms   "
          f"best-vs-best {(min(boxed) - min(local)) * 1e3:7.1f} ms")
    print(f"  scorer CPU overhead:      median {(statistics.median(boxed_cpu) - statistics.median(local_cpu)) * 1e3:7.1f} ms"
          f"   (the child's own CPU is in the device tasks' figure below)")
    print(f"  layers: {', '.join(dev.layers)}")
    print(f"  output read with process_vm_readv: {'yes' if dev._backend.vm_read else 'no (shared pool)'}")
    print("  bit-identical audio: yes")
    in_session(x, max(3, args.repeats // 3))
    device_tasks(max(5, args.repeats // 2))


def in_session(x: np.ndarray, repeats: int, devices: int = 4) -> None:
    """``devices`` devices (one definition on one track) one after another in one kernel session (as a
    scoring builds them), against the same in-process, interleaved; per-device overhead of the first (a
    fresh child and the determinism check) and the others (a fresh child each)."""
    rounds: dict[bool, list[list[float]]] = {True: [], False: []}
    for _ in range(repeats + 1):  # the first round warms up; not kept
        for trusted in (True, False):
            with kernel_session():
                rounds[trusted].append([one_device(x, trusted=trusted)[0] for _ in range(devices)])
            time.sleep(0.2)
    local, boxed = rounds[True][1:], rounds[False][1:]
    per = statistics.median((sum(b) - sum(t)) / devices for b, t in zip(boxed, local))
    first = statistics.median(b[0] - t[0] for b, t in zip(boxed, local))
    later = statistics.median(statistics.mean(b[1:]) - statistics.mean(t[1:]) for b, t in zip(boxed, local))
    print(f"\n{devices} devices one after another in one kernel session (as a scoring builds them), "
          f"median of {repeats} interleaved rounds")
    print(f"  sandbox overhead per device: {per * 1e3:+6.1f} ms   (first, with the determinism check: "
          f"{first * 1e3:+6.1f} ms; "
          f"next ones, a fresh child each: {later * 1e3:+6.1f} ms)")


def sandbox_cpu_s() -> float:
    """CPU seconds used so far by the fork server and every child it has had (reaped or alive)."""
    tick = os.sysconf("SC_CLK_TCK")
    pid = fork_server().pid

    def fields(p: int) -> list[int]:
        with open(f"/proc/{p}/stat") as f:
            return [int(v) for v in f.read().rsplit(")", 1)[1].split()[11:15]]  # utime stime cutime cstime

    total = sum(fields(pid))
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        for child in f.read().split():
            try:
                total += sum(fields(int(child))[:2])
            except (OSError, ValueError):
                pass  # exited meanwhile: counted in the server's cutime/cstime once reaped
    return total / tick


def device_tasks(repeats: int) -> None:
    """Score each device task's oracle end to end, sandboxed and trusted, on a cold stem cache, ``repeats``
    times interleaved; the per-device overhead is the difference of the medians over the number of
    song-defined devices the scoring builds (the issue's reading: the overhead on the oracle)."""
    from pytest_overdub.bench.tasks import bundled_bench, score_task
    from pytest_overdub.bench.validity import load_answer
    from pytest_overdub.render import kernels
    from pytest_overdub.render.stems import PROCESS_CACHE

    built = [0]
    build = kernels.build_kernel_device

    def counting_build(*args, **kwargs):
        built[0] += 1
        return build(*args, **kwargs)

    kernels.build_kernel_device = counting_build
    from pytest_overdub.render.sandbox import client

    sessions: list = []

    class Recorded(client._Session):  # each scoring's session, for the kernel time it spent
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            sessions.append(self)

    session_cls, client._Session = client._Session, Recorded
    bench = bundled_bench()
    print(f"\ndevice tasks end to end (oracle, cold stem cache, median of {repeats}; target < 2 s sandboxed, "
          "and on device-dotted-echo <= 10 ms overhead per device)")
    for task_id in [t for t in bench.task_ids() if t.startswith("device-")]:
        task = bench.task(task_id)
        sub, _ = load_answer(bench.oracle_path(task_id), task_id=task_id, kind="oracle")
        times: dict[bool, list[float]] = {False: [], True: []}
        scores, devices, spent, walls = {}, 0, [], []
        cpu0 = sandbox_cpu_s()
        for _ in range(repeats + 1):  # the first round warms imports and the first spare child; not kept
            for trusted in (False, True):
                PROCESS_CACHE.clear()
                built[0] = 0
                t0 = time.perf_counter()
                result = score_task(task, sub, bench=bench, trusted=trusted)
                times[trusted].append(time.perf_counter() - t0)
                if not trusted:
                    spent.append(sessions[-1].spent_s)
                    walls.append(sessions[-1].wall_s)
                scores[trusted], devices = result.score, built[0]
                time.sleep(0.05)
        tb, tt = (statistics.median(times[k][1:]) for k in (False, True))
        cpu = sandbox_cpu_s() - cpu0
        cpu0 = sandbox_cpu_s()
        per = (tb - tt) / devices * 1e3 if devices else float("nan")
        # each sandboxed scoring against the trusted one right after it: a slow spell of the machine
        # lands on both halves of a pair, so the median pair is steadier than the difference of medians
        paired = statistics.median(b - t for b, t in zip(times[False][1:], times[True][1:]))
        paired = paired / devices * 1e3 if devices else float("nan")
        print(f"  {task_id:<28} sandboxed {tb:6.3f} s (score {scores[False]:.3f})   trusted {tt:6.3f} s "
              f"(score {scores[True]:.3f})   {devices} devices: {per:+5.1f} ms each "
              f"(median pair {paired:+5.1f} ms)")
        print(f"  {'':<28} CPU of the sandbox's processes (server, children, spares) per sandboxed scoring: "
              f"{cpu / (repeats + 1) * 1e3:5.1f} ms; kernel time (the scoring's budget counts it): "
              f"median {statistics.median(spent[1:]) * 1e3:5.1f} ms, most {max(spent) * 1e3:5.1f} ms; "
              f"wall time in kernels: median {statistics.median(walls[1:]) * 1e3:5.1f} ms")
    kernels.build_kernel_device = build
    client._Session = session_cls


if __name__ == "__main__":
    main()
