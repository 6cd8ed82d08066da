"""The kernel sandbox (docs/devices.md): every rule break is refused or stopped, reported as a fault with
a clear reason, and the test process (the scorer) is unharmed and goes on to run the next kernel.

Limits are small here (1-2 s CPU, 1.5-4 s wall, 1 GB memory) so the whole file stays well under 30 s.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import tempfile
import textwrap

import numpy as np
import pytest

from pytest_overdub.errors import KernelError
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits, fork_server

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create") or os.name != "posix",
                                reason="the sandbox needs Linux")

LIMITS = SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=4.0)
SHORT_WALL = SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=1.5)
# The CPU limit must fire before the wall clock even when a loaded machine gives the child a small share.
SHORT_CPU = SandboxLimits(cpu_s=1, mem_mb=1024, wall_s=30.0, call_floor_s=30.0)
SR = 48000
X = np.vstack([np.linspace(-0.5, 0.5, 4800), np.linspace(0.5, -0.5, 4800)])

ECHO = """
def process(x, params, ctx):
    d = int(round(params["time"] * ctx.sr))
    hist = ctx.state.get("hist")
    if hist is None:
        hist = np.zeros((2, d))
    buf = np.concatenate([hist, x], axis=1)
    ctx.state["hist"] = buf[:, buf.shape[1] - d:]
    return x + params["mix"] * buf[:, :x.shape[1]]
"""
ECHO_PARAMS = [{"key": "time", "label": "time", "min": 0.001, "max": 2.0, "def": 0.01, "unit": "s"},
               {"key": "mix", "label": "mix", "min": 0.0, "max": 1.0, "def": 0.5, "unit": ""}]


# The import allow-list is the kernel contract, not a boundary (every module carries the real builtins): a
# case that tests a layer beneath it gets its modules the way an attacker would.
ESCAPE = ("(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))['__import__'] = "
          "np.__builtins__['__import__']\n")


def effect(body: str, *, params=(), dev_id="test.k") -> dict:
    return {"id": dev_id, "kind": "effect", "name": dev_id, "kernel": textwrap.dedent(body),
            "params": list(params), "version": 1}


def sandboxed(defn: dict, limits: SandboxLimits = LIMITS):
    return build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=7, trusted=False, limits=limits)


def run_bad(body: str, limits: SandboxLimits = LIMITS) -> KernelError:
    """Build and run a kernel whose ``process`` does something forbidden; return the fault."""
    src = ESCAPE + "import os, sys, socket, subprocess, ctypes, time, signal\n\ndef process(x, params, ctx):\n" + \
        textwrap.indent(textwrap.dedent(body), "    ") + "\n    return x\n"
    dev = sandboxed(effect(src), limits)
    with pytest.raises(KernelError) as info:
        dev.process(X, {})
    dev.close()
    return info.value


@pytest.fixture(autouse=True)
def next_kernel_still_runs():
    """After every case the scorer goes on: a fresh echo runs in the sandbox with the exact answer."""
    yield
    dev = sandboxed(effect(ECHO, params=ECHO_PARAMS))
    y = dev.process(X, {"time": 0.01, "mix": 0.5})
    dev.close()
    d = 480
    np.testing.assert_array_equal(y[:, :d], X[:, :d])
    np.testing.assert_array_equal(y[:, d:], X[:, d:] + 0.5 * X[:, :-d])


def test_all_layers_active_as_root():
    dev = sandboxed(effect(ECHO, params=ECHO_PARAMS))
    layers = " ".join(dev.layers)
    dev.close()
    for layer in ("rlimit", "no_new_privs", "seccomp"):
        assert layer in layers
    if os.geteuid() == 0:
        assert "netns" in layers and "uid(" in layers
    assert dev._backend.vm_read or os.geteuid() != 0  # root may read the child's output directly


@pytest.mark.parametrize("how", [
    "open(PATH, 'w').write('pwned')",
    "os.close(os.open(PATH, os.O_WRONLY | os.O_CREAT, 0o644))",
    "np.save(PATH, x)",
])
def test_writing_a_file_is_stopped(tmp_path, how):
    path = str(tmp_path / "written.npy")
    err = run_bad(how.replace("PATH", repr(path)))
    assert "forbidden system call" in err.reason
    assert "for writing" in err.reason and "written.npy" in err.reason
    assert not os.path.exists(path)


def test_reading_shadow_is_refused():
    err = run_bad("open('/etc/shadow').read()")
    assert "PermissionError" in err.reason


def test_reading_a_world_readable_temp_file_is_refused():
    fd, path = tempfile.mkstemp(prefix="overdub-secret-", dir="/tmp")
    try:
        os.write(fd, b"secret")
        os.close(fd)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        err = run_bad(f"open({path!r}).read()")
        assert "PermissionError" in err.reason
        assert "overdub-secret-" in str(err)  # the kernel's traceback names what it tried
    finally:
        os.unlink(path)


def test_connecting_to_a_local_listener_is_stopped():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        err = run_bad(f"socket.socket().connect(('127.0.0.1', {port}))")
        assert "forbidden system call" in err.reason and "socket" in err.reason
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


@pytest.mark.parametrize("how,said", [
    ("os.system('touch MARKER')", "os.system"),
    ("subprocess.run(['touch', 'MARKER'])", "subprocess"),
    ("ctypes.CDLL(None).system(b'touch MARKER')", "'system'"),
])
def test_starting_a_program_is_stopped(tmp_path, how, said):
    marker = str(tmp_path / "marker")
    err = run_bad(how.replace("MARKER", marker))
    assert "forbidden system call" in err.reason and said in err.reason
    assert not os.path.exists(marker)


def test_fork_is_stopped():
    err = run_bad("os.fork()")
    assert "forbidden system call" in err.reason and "os.fork" in err.reason


def test_killing_the_parent_or_the_scorer_is_stopped():
    server_pid = fork_server().pid
    err = run_bad(f"os.kill({server_pid}, signal.SIGKILL)")  # the child's parent (os.getppid is refused)
    assert "forbidden system call" in err.reason and "os.kill" in err.reason
    err = run_bad(f"os.kill({os.getpid()}, signal.SIGTERM)")
    assert "forbidden system call" in err.reason
    os.kill(server_pid, 0)  # the fork server is still there (raises if it is gone)
    assert fork_server().pid == server_pid


def test_cpu_burn_is_stopped_by_the_cpu_limit():
    err = run_bad("while True:\n    pass", SHORT_CPU)
    assert "CPU time limit of 1 s exceeded" in err.reason


def test_each_device_gets_a_child_with_its_own_limits():
    """Children are claimed one device ahead; a device whose limits differ from the child claimed ahead
    must still get a child hardened with its own limits (here read back as the RLIMIT_CPU soft limit)."""
    reads_limit = effect(ESCAPE + "import resource\n\ndef process(x, params, ctx):\n"
                         "    return x * resource.getrlimit(resource.RLIMIT_CPU)[0]\n")
    seen = []
    for limits in (LIMITS, SHORT_CPU, SHORT_CPU, LIMITS):
        dev = sandboxed(reads_limit, limits)
        seen.append(float(dev.process(X, {})[0, 0] / X[0, 0]))
        dev.close()
    assert seen == [2.0, 1.0, 1.0, 2.0]


def test_sleeping_is_stopped_by_the_wall_clock():
    """The call's budget is capped at ``wall_s`` (1.5 s), the backstop: a sleep charged as kernel time
    lags the wall clock by a sample, so the backstop stops it first."""
    err = run_bad("time.sleep(600)", SHORT_WALL)
    assert "wall-clock backstop of 1.5 s exceeded while running" in err.reason


def test_a_40_gb_allocation_is_refused():
    err = run_bad("big = np.ones(5 * 10**9)")
    assert "MemoryError" in err.reason


def test_nan_output_is_a_fault():
    err = run_bad("x = x.copy()\nx[1, 17] = np.nan")
    assert "channel 1, frame 17" in str(err) and "finite" in str(err)


def test_wrong_shape_is_a_fault():
    err = run_bad("return x[:, :-1]")
    assert "shape (2, 4799)" in str(err) and "(2, 4800)" in str(err)


def test_raising_reports_the_kernels_traceback_with_line_numbers():
    src = "def helper(v):\n    return v / 0\n\ndef process(x, params, ctx):\n    return helper(1.0)\n"
    dev = sandboxed(effect(src))
    with pytest.raises(KernelError) as info:
        dev.process(X, {})
    msg = str(info.value)
    assert "ZeroDivisionError" in msg
    assert 'line 5, in process' in msg and 'line 2, in helper' in msg
    assert "return v / 0" in msg
    # a faulted device stays faulted (no half-state), and says why
    with pytest.raises(KernelError, match="already faulted"):
        dev.process(X, {})


def test_a_kernel_that_fails_to_load_fails_the_build():
    with pytest.raises(KernelError, match=r"line 2"):
        sandboxed(effect("x = 1\nthis is not python\n"))


def test_sandbox_and_in_process_are_bit_identical():
    src = """
    from scipy import signal as sps
    def process(x, params, ctx):
        if "zi" not in ctx.state:
            ctx.state["b"], ctx.state["a"] = sps.butter(2, 1000.0 / (ctx.sr / 2))
            ctx.state["zi"] = np.zeros((2, 2))
            ctx.state["noise"] = ctx.rng(1)
        y, ctx.state["zi"] = sps.lfilter(ctx.state["b"], ctx.state["a"], x, axis=1, zi=ctx.state["zi"])
        y = y + 1e-3 * ctx.state["noise"].standard_normal(x.shape)
        return np.tanh(y * params["drive"])
    """
    defn = effect(src, params=[{"key": "drive", "label": "drive", "min": 0.1, "max": 10.0, "def": 2.0}])
    x = np.random.default_rng(3).standard_normal((2, 20000)) * 0.3
    outs = []
    for trusted in (True, False):
        dev = build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=11, trusted=trusted, limits=LIMITS)
        outs.append(np.concatenate([dev.process(x[:, :7000], {"drive": 3.0}),
                                    dev.process(x[:, 7000:], {"drive": 3.0})], axis=1))
        dev.close()
    assert np.array_equal(outs[0], outs[1])
    assert np.abs(outs[0]).max() > 0.1


def test_instrument_bit_identical_and_tail():
    from pytest_overdub.devices.base import NoteEvent

    src = """
    TAIL_S = 1.5
    def render(notes, params, ctx, n_frames):
        out = np.zeros((2, n_frames))
        for n in notes:
            i = int(round(n.start_s * ctx.sr))
            k = min(n_frames - i, int(ctx.sr * (n.dur_s + TAIL_S)))
            t = np.arange(k) / ctx.sr
            tone = n.velocity * np.sin(2 * np.pi * dsp.mtof(n.pitch) * t) * np.exp(-t / params["decay"])
            out[:, i:i + k] += tone
        return out
    """
    defn = {"id": "test.bar", "kind": "instrument", "kernel": textwrap.dedent(src), "version": 1,
            "params": [{"key": "decay", "label": "decay", "min": 0.01, "max": 5, "def": 0.2, "unit": "s"}]}
    notes = [NoteEvent(0.1, 0.2, 69, 0.8, 0, {}), NoteEvent(0.5, 0.25, 81, 0.5, 1, {"decay": 0.1})]
    outs = []
    for trusted in (True, False):
        dev = build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=1, trusted=trusted, limits=LIMITS)
        assert dev.tail_s == 1.5
        outs.append(dev.render(notes, n_frames=SR))
        dev.close()
    assert np.array_equal(outs[0], outs[1])
    onset = int(0.1 * SR)
    assert np.all(outs[0][:, :onset] == 0) and outs[0][0, onset + 10] != 0


def test_a_kernel_may_keep_views_of_its_input_across_calls():
    """State holding a view of ``x`` (not a copy) must see the old input on the next call, exactly as
    in-process, even though the sandbox reuses its transfer memory."""
    src = """
    def process(x, params, ctx):
        prev = ctx.state.get("prev")
        ctx.state["prev"] = x[:, -4:]
        return x if prev is None else x + prev.sum(axis=1, keepdims=True)
    """
    defn = effect(src)
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal((2, 1000)) for _ in range(3)]
    outs = []
    for trusted in (True, False):
        dev = build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=1, trusted=trusted, limits=LIMITS)
        outs.append([dev.process(x) for x in xs])
        dev.close()
    for a, b in zip(*outs):
        assert np.array_equal(a, b)
    np.testing.assert_array_equal(outs[1][2], xs[2] + xs[1][:, -4:].sum(axis=1, keepdims=True))
