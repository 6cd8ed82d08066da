"""Kernel sessions: one scoring's devices, each in a fresh sandbox child, under one fault latch.

Each case asserts which child served a device (its pid) and the exact audio the device returned, so a
child reused for a second device, or a kernel's change to the interpreter that reaches the next device,
fails here. (The session's time budget and determinism check: ``test_sandbox_budgets.py``.)
"""

from __future__ import annotations

import contextlib
import os
import textwrap

import numpy as np
import pytest

from pytest_overdub.errors import KernelError
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits, fork_server, kernel_session

#: Kernel source that restores the real ``__import__`` (the allow-list is a contract, not a boundary), so
#: a test kernel can import what it needs to misbehave.
ESCAPE = ("(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))['__import__'] = "
          "np.__builtins__['__import__']\n")

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create") or os.name != "posix",
                                reason="the sandbox needs Linux")

LIMITS = SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=4.0)
SR = 48000
X = np.vstack([np.linspace(-0.5, 0.5, 4800), np.linspace(0.5, -0.5, 4800)])

# Counts its calls in a module global and in ctx.state: a fresh device returns x * 1 on its first call.
COUNTER = """
calls = 0

def process(x, params, ctx):
    global calls
    calls += 1
    ctx.state["n"] = ctx.state.get("n", 0) + 1
    return x * (calls * ctx.state["n"])
"""


def effect(body: str, dev_id: str = "test.session") -> dict:
    return {"id": dev_id, "kind": "effect", "name": dev_id, "kernel": textwrap.dedent(body), "params": [],
            "version": 1}


def run_device(body: str, x: np.ndarray = X, *, calls: int = 1, limits: SandboxLimits = LIMITS):
    """Build a sandboxed device, call it ``calls`` times, close it; returns (its child's pid, outputs)."""
    dev = build_kernel_device(effect(body), sr=SR, tempo_bpm=120.0, seed=3, trusted=False, limits=limits)
    pid = dev._backend.pid
    try:
        return pid, [dev.process(x, {}) for _ in range(calls)]
    finally:
        dev.close()


def exit_status(pid: int) -> dict:
    """How a child ended, from the fork server (waits up to 2 s for it to exit by itself)."""
    return fork_server().request({"op": "end", "pid": pid, "kill": False, "grace_s": 2.0})


def test_each_device_of_a_session_gets_a_fresh_child():
    with kernel_session():
        pid_a, outs_a = run_device(COUNTER, calls=2)
        pid_b, outs_b = run_device(COUNTER, calls=2)
    assert pid_a != pid_b
    # the second device starts from a fresh module namespace and a fresh ctx.state
    np.testing.assert_array_equal(outs_b[0], X)
    np.testing.assert_array_equal(outs_b[1], X * 4)
    assert all(np.array_equal(a, b) for a, b in zip(outs_a, outs_b))


def test_outside_a_session_each_device_has_its_own_child():
    pid_a, _ = run_device(COUNTER)
    pid_b, _ = run_device(COUNTER)
    assert pid_a != pid_b


def test_a_closed_devices_child_is_ended():
    """The server kills it when its device closes (it may see its socket's EOF and exit first)."""
    import signal

    pid, _ = run_device(COUNTER)
    status = exit_status(pid)
    assert "killed" not in status and status in ({"exit": 0}, {"signal": signal.SIGKILL})


def test_nested_sessions_join_the_outer_one():
    """A device that faulted inside the inner session is not built again in the outer one."""
    raises = "def process(x, params, ctx):\n    raise ValueError('no')\n"
    with kernel_session():
        with kernel_session():
            with pytest.raises(KernelError, match="ValueError: no"):
                run_device(raises)
        with pytest.raises(KernelError, match="faulted earlier in this scoring.*ValueError: no"):
            run_device(raises)


@pytest.mark.parametrize("patch, uses, expected", [
    ("json.dumps.__code__ = (lambda *a, **k: 'patched!').__code__", "len(json.dumps([1, 2]))", 6.0),
    ("statistics.median.__code__ = (lambda data: 0.0).__code__", "statistics.median([1.0, 2.0, 4.0])", 2.0),
    ("np.convolve.__wrapped__.__code__ = (lambda a, v, mode='full': a * 0).__code__",
     "float(np.convolve([1.0, 2.0], [1.0, 1.0])[1])", 3.0),
    ("statistics.fmean.__defaults__ = ([1.0, 0.0],)", "statistics.fmean([3.0, 4.0])", 3.5),
    ("dsp.FeedbackDelay.process = lambda *a, **k: 0",
     "float(dsp.FeedbackDelay(channels=2).process(np.ones((2, 8)), delay_frames=2, feedback=0.0)[0, 2])", 1.0),
    ("np.sin = np.cos", "float(np.sin(0.0)) + 1.0", 1.0),
], ids=["json.dumps.__code__", "statistics.median.__code__", "np.convolve.__code__", "__defaults__",
        "class attribute", "module name"])
def test_what_a_kernel_patches_does_not_reach_the_next_device(patch, uses, expected):
    """A kernel that patches a function's code or defaults, a class or a module changes nothing for the
    next device of the same scoring: every device runs in a fresh child."""
    # the modules through numpy's globals, not ``import`` (which an allow-list may refuse)
    mods = "M = vars(np._core.numeric)['sys'].modules\njson, statistics = M['json'], M['statistics']\n"
    patcher = f"{mods}\ndef process(x, params, ctx):\n    {patch}\n    return x\n"
    user = f"{mods}\ndef process(x, params, ctx):\n    return x * ({uses})\n"
    with kernel_session():
        with contextlib.suppress(KernelError):  # patching json breaks the patcher's own replies: a fault
            run_device(patcher)
        _, outs = run_device(user)
    np.testing.assert_array_equal(outs[0], X * expected)


def test_a_timer_the_previous_kernel_left_does_not_reach_the_next_device():
    arms = ESCAPE + "import signal\ndef process(x, params, ctx):\n    signal.alarm(1)\n    return x\n"
    waits = ESCAPE + "import time\ndef process(x, params, ctx):\n    time.sleep(1.5)\n    return x + 1.0\n"
    with kernel_session():
        run_device(arms)
        _, outs = run_device(waits)  # SIGALRM would kill a shared child 1 s after the first call
    np.testing.assert_array_equal(outs[0], X + 1.0)


def test_a_scoring_builds_each_device_in_its_own_child_with_the_same_scores():
    """The rumble-filter oracle's song-defined device is built for each probe render, the real Room part
    and the scope gate's renders (one definition on one track): sandboxed, each build gets its own child,
    one more child runs the determinism check's second probe, and the scoring is the trusted one exactly."""
    from pytest_overdub.bench.tasks import bundled_bench, score_task
    from pytest_overdub.bench.validity import load_answer
    from pytest_overdub.render.sandbox import client
    from pytest_overdub.render.stems import PROCESS_CACHE

    bench = bundled_bench()
    task = bench.task("device-rumble-filter")
    sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    pids = []
    init = client.SandboxedKernel.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        pids.append(self.pid)

    client.SandboxedKernel.__init__ = recording_init
    try:
        PROCESS_CACHE.clear()
        boxed = score_task(task, sub, bench=bench, trusted=False)
    finally:
        client.SandboxedKernel.__init__ = init
    PROCESS_CACHE.clear()
    trusted = score_task(task, sub, bench=bench, trusted=True)
    assert len(pids) >= 6 and len(set(pids)) == len(pids)
    assert [c.value for c in boxed.checks] == [c.value for c in trusted.checks]
    assert boxed.score == trusted.score == 1.0


def test_prestart_returns_at_once_and_the_first_device_waits_for_the_server():
    from pytest_overdub.render.sandbox import prestart, shutdown

    shutdown()
    server = prestart()
    assert server.pid is None  # started, not waited for: its imports run while the scorer goes on
    assert prestart() is server  # one server per process
    pid, outs = run_device(COUNTER)
    assert fork_server() is server and server.pid is not None and pid != server.pid
    np.testing.assert_array_equal(outs[0], X)


@pytest.mark.parametrize("oracle, defines", [("device-dotted-echo", True), ("device-decaying-instrument", True),
                                             ("mix-chorus-lift", False), ("write-bassline", False)])
def test_the_plugin_prestarts_the_sandbox_for_submissions_that_define_devices(oracle, defines):
    from pytest_overdub.bench.tasks import bundled_bench
    from pytest_overdub.plugin import _defines_devices
    from pytest_overdub.song.submission import load_submission

    sub = load_submission(bundled_bench().oracle_path(oracle))
    assert _defines_devices(sub) is defines
