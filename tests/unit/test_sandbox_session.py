"""Kernel sessions: inside one, a closed device's sandbox child serves the next device of the scoring.

Each case asserts which child served a device (its pid) and the exact audio the device returned, so a
child reused when it must not be, or a reset that leaves the previous kernel's state, fails here.
"""

from __future__ import annotations

import os
import signal
import textwrap

import numpy as np
import pytest

from pytest_overdub.errors import KernelError
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits, fork_server, kernel_session

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


# The import allow-list is the kernel contract, not a boundary: cases that need other modules take them.
ESCAPE = ("(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))['__import__'] = "
          "np.__builtins__['__import__']\n")


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


def test_one_child_serves_a_sessions_devices_one_after_another():
    with kernel_session():
        pid_a, outs_a = run_device(COUNTER, calls=2)
        pid_b, outs_b = run_device(COUNTER, calls=2)
    assert pid_a == pid_b
    # the second device starts from a fresh module namespace and a fresh ctx.state
    np.testing.assert_array_equal(outs_b[0], X)
    np.testing.assert_array_equal(outs_b[1], X * 4)
    assert all(np.array_equal(a, b) for a, b in zip(outs_a, outs_b))
    # at the end of the session the idle child has ended (the server kills it; it may see EOF first)
    status = exit_status(pid_b)
    assert "killed" not in status and status in ({"exit": 0}, {"signal": signal.SIGKILL})


def test_outside_a_session_each_device_has_its_own_child():
    pid_a, _ = run_device(COUNTER)
    pid_b, _ = run_device(COUNTER)
    assert pid_a != pid_b


def test_nested_sessions_join_the_outer_one():
    with kernel_session():
        with kernel_session():
            pid_a, _ = run_device(COUNTER)
        pid_b, _ = run_device(COUNTER)
    assert pid_a == pid_b


@pytest.mark.parametrize("body, fault", [("raise ValueError('no')", "ValueError: no"),
                                         ("return x * np.nan", "finite")],
                         ids=["kernel-raised", "output-refused"])
def test_a_child_whose_device_faulted_is_not_reused(body, fault):
    with kernel_session():
        dev = build_kernel_device(effect(f"def process(x, params, ctx):\n    {body}\n"),
                                  sr=SR, tempo_bpm=120.0, seed=3, trusted=False, limits=LIMITS)
        pid_a = dev._backend.pid
        with pytest.raises(KernelError, match=fault):
            dev.process(X, {})
        dev.close()
        pid_b, outs = run_device(COUNTER)
    assert pid_b != pid_a
    np.testing.assert_array_equal(outs[0], X)


def test_a_device_interrupted_mid_call_leaves_a_child_that_is_not_reused(monkeypatch):
    """The scorer stops waiting between its request and the reply: that reply may still be in the
    socket, so the child must not serve the next device (it would read the stale reply as its build)."""
    from pytest_overdub.render.sandbox import client

    def interrupted(shape):
        raise KeyboardInterrupt

    with kernel_session():
        dev = build_kernel_device(effect(COUNTER), sr=SR, tempo_bpm=120.0, seed=3, trusted=False,
                                  limits=LIMITS)
        pid_a = dev._backend.pid
        with monkeypatch.context() as m:
            m.setattr(client, "_faulted_in", interrupted)
            with pytest.raises(KeyboardInterrupt):
                dev.process(X, {})
        dev.close()
        pid_b, outs = run_device(COUNTER)
    assert pid_b != pid_a
    np.testing.assert_array_equal(outs[0], X)


def test_a_kernel_that_rebinds_a_shared_name_leaves_a_child_that_is_not_reused():
    patcher = "def process(x, params, ctx):\n    np.sin = np.cos\n    dsp.FeedbackDelay.process = None\n    return x\n"
    uses_sin = "def process(x, params, ctx):\n    return np.sin(x)\n"
    with kernel_session():
        pid_a, _ = run_device(patcher)
        pid_b, outs = run_device(uses_sin)
    assert pid_b != pid_a
    np.testing.assert_array_equal(outs[0], np.sin(X))


def test_the_next_device_gets_its_full_cpu_limit_again():
    """Two devices that each burn 1.2 s of CPU under a 2 s limit: in one child with the limit counted
    over the child's life the second would be stopped; it is renewed at the release."""
    burn = ESCAPE + textwrap.dedent("""
    import resource, time
    def process(x, params, ctx):
        t0 = time.process_time()
        while time.process_time() - t0 < 1.2:
            pass
        return x * resource.getrlimit(resource.RLIMIT_CPU)[0]
    """)
    with kernel_session():
        pid_a, outs_a = run_device(burn)
        pid_b, outs_b = run_device(burn)
    assert pid_a == pid_b
    assert outs_a[0][0, 0] / X[0, 0] == 2.0  # the first device's soft limit: cpu_s
    assert outs_b[0][0, 0] / X[0, 0] >= 2.0 + 2.0  # renewed: at least the time used so far + cpu_s


def test_a_timer_the_previous_kernel_left_does_not_reach_the_next_device():
    arms = ESCAPE + "import signal\ndef process(x, params, ctx):\n    signal.alarm(1)\n    return x\n"
    waits = ESCAPE + "import time\ndef process(x, params, ctx):\n    time.sleep(1.5)\n    return x + 1.0\n"
    with kernel_session():
        pid_a, _ = run_device(arms)
        pid_b, outs = run_device(waits)  # SIGALRM would kill the child 1 s after the first call
    assert pid_a == pid_b
    np.testing.assert_array_equal(outs[0], X + 1.0)


def test_devices_with_other_limits_do_not_share_a_child():
    other = SandboxLimits(cpu_s=1, mem_mb=1024, wall_s=4.0)
    with kernel_session():
        pid_a, _ = run_device(COUNTER)
        pid_b, _ = run_device(COUNTER, limits=other)
        pid_c, _ = run_device(COUNTER)
    assert pid_b != pid_a and pid_c == pid_a


def test_a_scoring_builds_its_devices_in_one_child_with_the_same_scores():
    """The rumble-filter oracle builds five song-defined devices (four tone probes and the real Room part,
    whose render its three real-track checks share): sandboxed, one child serves them all, and the scoring
    is the trusted one exactly."""
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
    assert len(pids) == 5 and len(set(pids)) == 1
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
