"""Every channel from a sandbox child is hostile: the transfer pool a kernel can reach is sealed, and
every message a child sends is bounded and checked in the scorer before it is used.

The forgeries are done the way a kernel can do them: its module body runs in the child's interpreter,
reaches ``sys.modules`` through ``object.__subclasses__()`` (no import needed) and replaces the child's
``send`` with one that rewrites, adds or replaces replies, or writes raw bytes to the scorer's socket.
Each must end as a clean fault naming what was wrong, after which the scorer goes on (an exact echo runs).
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pytest_overdub.errors import KernelError
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits, kernel_session

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create") or os.name != "posix",
                                reason="the sandbox needs Linux")

LIMITS = SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=4.0)
SR = 48000
X = np.vstack([np.linspace(-0.5, 0.5, 4800), np.linspace(0.5, -0.5, 4800)])
HALF = "def process(x, params, ctx):\n    return 0.5 * x\n"
# The child's os module without an import (an import allow-list does not stop this).
OS = '_os = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]' \
     '.__init__.__globals__\n'


def device(src: str, dev_id: str = "test.k"):
    defn = {"id": dev_id, "kind": "effect", "name": dev_id, "kernel": src, "params": [], "version": 1}
    return build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=7, trusted=False, limits=LIMITS)


@pytest.fixture(autouse=True)
def scorer_goes_on():
    yield
    dev = device(HALF, "test.half")
    y = dev.process(X, {})
    dev.close()
    np.testing.assert_array_equal(y, 0.5 * X)


# --- the transfer pool ------------------------------------------------------------------------------


def test_the_transfer_memfd_cannot_be_resized_or_resealed():
    from pytest_overdub.render.sandbox.transport import new_memfd

    fd, mm = new_memfd("test-pool", 1 << 16)
    try:
        for size in (0, 4096, 1 << 17):
            with pytest.raises(PermissionError):
                os.ftruncate(fd, size)
        with pytest.raises(PermissionError):  # F_SEAL_SEAL: not even a write seal can be added
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE)
        with pytest.raises(PermissionError):  # growing by a write past the end
            os.pwrite(fd, b"x", 1 << 16)
        assert os.fstat(fd).st_size == 1 << 16
        mm[-1:] = b"\x01"  # the mapping is whole and writable
        assert mm[-1] == 1
    finally:
        mm.close()
        os.close(fd)


TRUNCATE = OS + """
def process(x, params, ctx):
    for fd in range(3, 256):
        try:
            st = _os["fstat"](fd)
        except OSError:
            continue
        if st.st_size > 0 and (st.st_mode & 0o170000) == 0o100000:
            try:
                _os["ftruncate"](fd, 0)
            except OSError:
                pass
    return x
"""

SCENARIO = """
import json
from pytest_overdub.bench.tasks import bundled_bench, score_task
from pytest_overdub.bench.validity import load_answer
from pytest_overdub.song.submission import submission_from_data

bench = bundled_bench()
ops = json.loads(bench.oracle_path("device-dotted-echo").read_text())["ops"]
ops[0]["device"]["kernel"] = %r
res = score_task(bench.task("device-dotted-echo"), submission_from_data(ops), bench=bench, trusted=False)
print("truncating:", res.check("clean").score, [w for w in res.warnings if w.startswith("fault")])
task = bench.task("device-rumble-filter")
sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
print("next scoring:", score_task(task, sub, bench=bench, trusted=False).score)
"""


def test_a_kernel_that_truncates_the_pool_faults_its_task_and_the_scorer_goes_on():
    """The kernel finds the pool's fd by ``fstat`` over small fd numbers and truncates it. Before the
    pool was sealed the scorer died of SIGBUS on its next write to it (``overdub score`` exited -7 with
    no output); now the truncation is stopped (seccomp) or refused (the seals): the task's scoring ends
    with a fault warning and a failed ``clean`` gate, and the next scoring in the same process is exact.
    In a subprocess, so a scorer killed by a signal fails this test instead of ending the test run."""
    run = subprocess.run([sys.executable, "-c", SCENARIO % TRUNCATE], capture_output=True, text=True,
                         timeout=300, cwd="/")
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-2000:])
    truncating, following = run.stdout.splitlines()
    assert following == "next scoring: 1.0"
    if "seccomp" in _layers():
        why = ("stopped by the sandbox: a forbidden system call while running; the kernel truncated a file "
               "(file writes are not allowed)")
        assert truncating.startswith("truncating: 0.0 ['fault: ") and why in truncating, truncating
    else:  # the seals refuse it and the kernel returns its input
        assert truncating == "truncating: 1.0 []"


def _layers() -> tuple[str, ...]:
    from pytest_overdub.render.sandbox import probe_layers

    return probe_layers(LIMITS)[0]


# --- forged replies ---------------------------------------------------------------------------------

FORGER = OS + """
_child = _os["sys"].modules["pytest_overdub.render.sandbox.child"]
_real = _child.send
_struct = _os["sys"].modules["struct"]

def _forged(chan, obj, fds=()):
{body}

_child.send = _forged

def process(x, params, ctx):
    return x
"""


def forger(body: str) -> str:
    return FORGER.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    "))


FORGERIES = {
    "latency 6e7": ('_real(chan, {**obj, "latency_frames": 60000000} if "latency_frames" in obj else obj, fds)',
                    "sent a malformed reply while loading: latency_frames 60000000 is outside 0..480000"),
    "latency 1e9 as a float": (
        '_real(chan, {**obj, "latency_frames": 1e9} if "latency_frames" in obj else obj, fds)',
        "sent a malformed reply while loading: latency_frames 1000000000.0 is not an int"),
    "tail NaN": ('_real(chan, {**obj, "tail_s": float("nan")} if "tail_s" in obj else obj, fds)',
                 "sent a malformed reply while loading: tail_s nan is outside 0..60"),
    "60 MB note": ('_real(chan, {"note": "x" * (60 << 20)})',
                   "sent a malformed reply while loading: a message of 62914572 bytes (at most 1048576 "
                   "allowed)"),
    "4 GB length prefix": ('chan.sendall(_struct.pack("<I", 0xFFFFFFFF))',
                           "sent a malformed reply while loading: a message of 4294967295 bytes (at most "
                           "1048576 allowed)"),
    "100 notes": ('for i in range(100):\n    _real(chan, {"note": f"note {i}"})\n_real(chan, obj, fds)',
                  "sent a malformed reply while loading: more than 64 notes"),
    "long note": ('_real(chan, {"note": "n" * 5000})\n_real(chan, obj, fds)',
                  "sent a malformed reply while loading: note is 5000 characters long; at most 1000 allowed"),
    "long error": ('_real(chan, {"ok": False, "error": "e" * 20000, "reason": "r"})',
                   "sent a malformed reply while loading: error is 20000 characters long; at most 16000 "
                   "allowed"),
    "passed fd": ("_real(chan, obj, (0,))",
                  "sent a malformed reply while loading: passed file descriptors (at most 0 allowed)"),
    "not JSON": ('chan.sendall(_struct.pack("<I", 3) + b"{{{")',
                 "sent a malformed reply while loading: a message that is not JSON (JSONDecodeError)"),
    "a list": ("_real(chan, [obj])", "sent a malformed reply while loading: a list instead of an object"),
    "extra field": ('_real(chan, {**obj, "more": 1})',
                    "sent a malformed reply while loading: built reply with unexpected field 'more'"),
    "no ok": ('_real(chan, {k: v for k, v in obj.items() if k != "ok"})',
              "sent a malformed reply while loading: built reply without ok"),
    "cpu_ms a bool": ('_real(chan, {**obj, "cpu_ms": True} if "cpu_ms" in obj else obj, fds)',
                      "sent a malformed reply while loading: cpu_ms True is not a number"),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_reply_is_a_clean_fault(name):
    body, reason = FORGERIES[name]
    with pytest.raises(KernelError) as info:
        dev = device(forger(body))
        dev.process(X, {})
    assert info.value.reason == reason
    assert str(info.value) == f"kernel test.k faulted in the sandbox: {reason}"


CALL_FORGERIES = {
    "addr 2**70": ('_real(chan, {**obj, "addr": 2 ** 70} if "addr" in obj else obj, fds)',
                   "addr 1180591620717411303424 is outside 1..72057594037927936"),
    "timing_ms of 4": ('_real(chan, {**obj, "timing_ms": [0, 0, 0, 0]} if "timing_ms" in obj else obj, fds)',
                       "timing_ms [0, 0, 0, 0] is not a list of 3 durations"),
    "cpu_ms -1": ('_real(chan, {**obj, "cpu_ms": -1} if "timing_ms" in obj else obj, fds)',
                  "cpu_ms -1 is outside 0..1e+09"),
}


@pytest.mark.parametrize("name", sorted(CALL_FORGERIES))
def test_a_forged_call_reply_ends_the_child_which_is_not_reused(name):
    from pytest_overdub.render.sandbox import client

    body, what = CALL_FORGERIES[name]
    with kernel_session():
        dev = device(forger(body))
        backend = dev._backend
        if not backend.vm_read and "addr" in name:
            pytest.skip("the output is read through the pool here (no process_vm_readv)")
        with pytest.raises(KernelError) as info:
            dev.process(X, {})
        assert info.value.reason == f"sent a malformed reply while running: {what}"
        assert backend.pid is None and backend.sock is None  # ended at once
        dev.close()
        assert client._SESSION.get().idle == []  # never offered to the next device


def test_control_characters_in_a_kernels_error_are_escaped():
    dev = device("def process(x, params, ctx):\n    raise ValueError('\\x1b[2J\\udc80 gone')\n")
    with pytest.raises(KernelError) as info:
        dev.process(X, {})
    dev.close()
    assert "ValueError: \\x1b[2J\\udc80 gone" in str(info.value)
    assert "\x1b" not in str(info.value) and "\x1b" not in info.value.reason


def test_a_huge_kernel_error_is_clipped_by_the_child_and_still_says_what_was_raised():
    dev = device("def process(x, params, ctx):\n    raise ValueError('v' * 100000 + ' the end')\n")
    with pytest.raises(KernelError) as info:
        dev.process(X, {})
    dev.close()
    text = str(info.value)
    assert len(text) <= 16000 and "characters cut" in text
    assert text.startswith("kernel test.k raised: ValueError: vvv") and text.rstrip().endswith("the end")


# --- the checks themselves --------------------------------------------------------------------------


def test_framing_refuses_a_long_prefix_unread_and_closes_extra_fds():
    from pytest_overdub.render.sandbox.framing import BadMessage, recv, send

    a, b = socket.socketpair()
    try:
        a.sendall(struct.pack("<I", 0xFFFFFFFF) + b"rest")
        with pytest.raises(BadMessage, match="a message of 4294967295 bytes"):
            recv(b, max_bytes=1024)
        assert b.recv(16) == b"rest"  # not one byte of the body was read
        before = len(os.listdir("/proc/self/fd"))
        send(a, {"x": 1}, (a.fileno(), a.fileno(), a.fileno()))
        with pytest.raises(BadMessage, match="passed file descriptors"):
            recv(b, max_fds=1)
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("kind, msg, error", [
    ("built", {"ok": True, "tail_s": 61.0, "latency_frames": 0, "cpu_ms": 1.0}, "tail_s 61.0 is outside 0..60"),
    ("built", {"ok": True, "tail_s": 0, "latency_frames": 480001, "cpu_ms": 1.0},
     "latency_frames 480001 is outside 0..480000"),
    ("built", {"ok": True, "tail_s": 0, "latency_frames": -1, "cpu_ms": 1.0}, "latency_frames -1 is outside"),
    ("built", {"ok": True, "tail_s": 0, "latency_frames": 0, "cpu_ms": float("inf")}, "cpu_ms inf is outside"),
    ("ready", {"ready": True, "pid": 5, "layers": ["x"] * 33, "missing": [], "probe": 4096},
     "layers ['x', 'x',"),
    ("ready", {"ready": True, "pid": 5, "layers": [1], "missing": [], "probe": 4096}, "layers[0] 1 is not a string"),
    ("ready", {"ready": True, "pid": 0, "layers": [], "missing": [], "probe": 4096}, "pid 0 is outside 1..4194304"),
    ("ready", {"ready": True, "pid": 5, "layers": [], "missing": [], "probe": "0x10"}, "probe '0x10' is not an int"),
    ("called", {"ok": True, "cpu_ms": 1.0, "timing_ms": [0, 0, 0]}, "called reply without addr"),
    ("called", {"ok": True, "cpu_ms": 1.0, "timing_ms": [0, 0, 0], "addr": 10 ** 400}, "addr 1000000"),
    ("called", {"ok": True, "cpu_ms": 1.0, "timing_ms": [[[[[0]]]], 0, 0], "addr": 4096},
     "timing_ms[0] [[[...]]] is not a number"),
    ("fault", {"ok": False, "error": None, "reason": "r"}, "error None is not a string"),
])
def test_check_reply_names_the_field_the_value_and_the_bound(kind, msg, error):
    from pytest_overdub.render.sandbox.replies import BadReply, check_reply

    with pytest.raises(BadReply) as info:
        check_reply(msg, kind, sr=SR, vm=True)
    assert str(info.value).startswith(error)


def test_check_reply_accepts_what_the_child_sends():
    from pytest_overdub.render.sandbox.replies import check_reply

    built = {"ok": True, "tail_s": 60, "latency_frames": 480000, "cpu_ms": 0.0}
    assert check_reply(built, "built", sr=SR) is built
    called = {"ok": True, "cpu_ms": 3.5, "timing_ms": [0.1, 2.0, 0.0], "addr": 2 ** 46}
    assert check_reply(called, "called", vm=True) is called


def test_a_child_that_stops_reading_cannot_hold_the_scorer():
    """The kernel replaces the child's receive loop with a sleep, so the scorer's next request (a render
    with many notes, more than the socket holds) cannot be delivered: the send times out at the
    wall-clock limit and the child is killed."""
    src = OS + textwrap.dedent("""
        _child = _os["sys"].modules["pytest_overdub.render.sandbox.child"]
        _child.recv = lambda *a, **k: _os["sys"].modules["time"].sleep(3600)

        def render(notes, params, ctx, n_frames):
            return np.zeros((2, n_frames))
        """)
    defn = {"id": "test.deaf", "kind": "instrument", "name": "deaf", "kernel": src, "params": [], "version": 1}
    dev = build_kernel_device(defn, sr=SR, tempo_bpm=120.0, seed=7, trusted=False,
                              limits=SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=1.5))
    n = 200_000
    payload = {"pitch": [60] * n, "velocity": [0.5] * n, "start_s": [0.0] * n, "dur_s": [0.1] * n,
               "index": list(range(n)), "params": {}}
    with pytest.raises(KernelError) as info:
        dev._backend.render(payload, {}, 4800)
    dev.close()
    assert info.value.reason == "wall-clock timeout of 1.5 s while receiving its input"
