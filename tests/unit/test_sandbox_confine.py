"""What a sandboxed kernel can see and reach (issue 20, classes 2-5): not the scorer's environment, not
the checkout or site-packages, no unlisted module, no other process, and nothing of it outlives its
scoring. Each case is an attack the sandbox once let through.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import pytest_overdub
from pytest_overdub.errors import KernelError
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits, fork_server, kernel_session, shutdown

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create") or os.name != "posix",
                                reason="the sandbox needs Linux")

LIMITS = SandboxLimits(cpu_s=2, mem_mb=1024, wall_s=4.0)
X = np.vstack([np.linspace(-0.5, 0.5, 4800), np.linspace(0.5, -0.5, 4800)])
CHECKOUT = Path(pytest_overdub.__file__).resolve().parents[1]
# The import allow-list is the kernel contract, not a boundary (every module carries the real builtins):
# an attack on a layer beneath it gets its modules this way.
ESCAPE = ("(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))['__import__'] = "
          "np.__builtins__['__import__']\n")


def effect(body: str, dev_id: str = "test.confine") -> dict:
    return {"id": dev_id, "kind": "effect", "name": dev_id, "kernel": body, "params": [], "version": 1}


def sandboxed(body: str, limits: SandboxLimits = LIMITS):
    return build_kernel_device(effect(body), sr=48000, tempo_bpm=120.0, seed=7, trusted=False, limits=limits)


def attack(body: str, limits: SandboxLimits = LIMITS) -> KernelError:
    """Run ``body`` (with every module reachable) as a kernel's ``process``; return its fault."""
    src = ESCAPE + "import os, resource, signal\n\ndef process(x, params, ctx):\n" + \
        textwrap.indent(textwrap.dedent(body), "    ") + "\n    return x\n"
    dev = sandboxed(src, limits)
    try:
        with pytest.raises(KernelError) as info:
            dev.process(X, {})
    finally:
        dev.close()
    return info.value


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended: it only waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone_within(pids, seconds: float = 5.0) -> list[int]:
    """The pids still running after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


# -- class 2: the scorer's environment


def test_the_scorers_environment_reaches_no_kernel(monkeypatch):
    shutdown()  # the next server starts from this environment
    monkeypatch.setenv("OVERDUB_TEST_SECRET", "tok-7f3a9c")
    try:
        err = attack("raise ValueError(repr(sorted(os.environ.items())))")
        environ = Path(f"/proc/{fork_server().pid}/environ").read_bytes()  # the server's initial block
    finally:
        shutdown()
    assert "tok-7f3a9c" not in str(err) and "OVERDUB_TEST_SECRET" not in str(err)
    assert b"tok-7f3a9c" not in environ and b"OVERDUB_TEST_SECRET" not in environ
    assert "('PYTHONHASHSEED', '0')" in str(err)  # what Python needs is there


# -- class 3: what a kernel can read and import


def _site_packages() -> str:
    return str(Path(np.__file__).resolve().parents[1])


@pytest.mark.parametrize("how", [
    "open(TASK).read()",
    "open(ORACLE).read()",
    "os.listdir(CHECKOUT)",
    "open(GIT).read()",
    "os.listdir(SITE)",
], ids=["task", "oracle", "checkout", "git", "site-packages"])
def test_the_checkout_and_site_packages_are_not_readable(how):
    git = CHECKOUT / ".git"
    code = how.replace("TASK", repr(str(CHECKOUT / "tasks" / "device-dotted-echo.json"))) \
        .replace("ORACLE", repr(str(CHECKOUT / "oracles" / "device-dotted-echo.json"))) \
        .replace("CHECKOUT", repr(str(CHECKOUT))).replace("SITE", repr(_site_packages())) \
        .replace("GIT", repr(str(git / "HEAD" if git.is_dir() else git)))
    err = attack(code)
    assert "PermissionError" in err.reason


def test_numpy_scipy_and_the_stdlib_still_load_what_they_need():
    """The read set holds the stdlib, numpy and scipy: modules the fork server had not loaded yet
    (numpy.lib.recfunctions, numpy.ma.mrecords) load in the child, from wherever the interpreter lives."""
    src = ("from scipy import signal as sps\nimport math, cmath, fractions, statistics\n"
           "import numpy.lib.recfunctions as rfn, numpy.ma.mrecords\n"
           "def process(x, params, ctx):\n"
           "    b, a = sps.butter(2, 0.1)\n"
           "    rec = np.zeros(1, dtype=[('k', 'f8')])\n"
           "    one = rfn.structured_to_unstructured(rec)[0, 0] + math.cos(0.0) + statistics.fmean([0.0])\n"
           "    return sps.lfilter(b, a, x, axis=1) * one\n")
    from scipy import signal as sps

    dev = sandboxed(src)
    try:
        y = dev.process(X, {})
    finally:
        dev.close()
    b, a = sps.butter(2, 0.1)
    np.testing.assert_array_equal(y, sps.lfilter(b, a, X, axis=1))


@pytest.mark.parametrize("module", ["os", "socket", "ctypes", "pickle", "subprocess", "importlib",
                                    "scipy.io", "from scipy import io"])
def test_an_unlisted_import_faults_naming_the_module(module):
    stmt = module if module.startswith("from ") else f"import {module}"
    named = "scipy.io" if module.startswith("from ") else module
    with pytest.raises(KernelError) as info:
        sandboxed(f"{stmt}\ndef process(x, params, ctx):\n    return x\n")
    assert f"import of '{named}' is not allowed in a kernel" in str(info.value)
    assert "allowed: numpy, scipy" in str(info.value)


# -- class 4: other processes


@pytest.mark.parametrize("call", [
    "resource.prlimit(PID, resource.RLIMIT_AS, (1 << 20, 1 << 20))",
    "os.setpriority(os.PRIO_PROCESS, PID, 19)",
    "os.setpriority(os.PRIO_USER, 0, 19)",
    "os.sched_setaffinity(PID, {0})",
    "os.kill(0, signal.SIGKILL)",
], ids=["prlimit", "setpriority", "setpriority-user", "sched_setaffinity", "kill-group"])
def test_a_kernel_cannot_touch_the_scorer(call):
    before = (resource.getrlimit(resource.RLIMIT_AS), os.getpriority(os.PRIO_PROCESS, 0),
              os.sched_getaffinity(0))
    err = attack(call.replace("PID", str(os.getpid())))
    assert "forbidden system call" in err.reason
    if "prlimit" in call:  # the fault says what was tried
        assert f"called resource.prlimit on pid {os.getpid()}" in err.reason
    assert (resource.getrlimit(resource.RLIMIT_AS), os.getpriority(os.PRIO_PROCESS, 0),
            os.sched_getaffinity(0)) == before


@pytest.mark.parametrize("call", ["resource.prlimit(PID, resource.RLIMIT_AS, (1 << 20, 1 << 20))",
                                  "os.setpriority(os.PRIO_PROCESS, PID, 19)"], ids=["prlimit", "setpriority"])
def test_a_kernel_cannot_touch_another_scorings_child(call):
    """Another device's child (another scoring's, as far as this kernel knows) is left as it was: its echo
    still returns the exact answer."""
    victim = sandboxed("def process(x, params, ctx):\n"
                       "    return x + np.concatenate([x[:, :1] * 0, x[:, :-1]], axis=1)\n")
    try:
        err = attack(call.replace("PID", str(victim._backend.pid)))
        assert "forbidden system call" in err.reason
        y = victim.process(X, {})
    finally:
        victim.close()
    np.testing.assert_array_equal(y[:, 1:], X[:, 1:] + X[:, :-1])


def test_each_child_runs_as_its_own_uid_when_root():
    if os.geteuid() != 0:
        pytest.skip("the uid layer runs as root only")
    identity = "def process(x, params, ctx):\n    return x\n"
    a, b = sandboxed(identity), sandboxed(identity)
    try:
        uids = [os.stat(f"/proc/{d._backend.pid}").st_uid for d in (a, b)]
    finally:
        a.close()
        b.close()
    assert uids[0] != uids[1] and 0 not in uids and os.getuid() not in uids


# -- class 5: nothing outlives its scoring


LOOPER = ESCAPE + textwrap.dedent("""
    import sys, signal
    def process(x, params, ctx):
        child = sys.modules["pytest_overdub.render.sandbox.child"]
        def forever(*args, **kwargs):  # the child's receive loop never sees EOF again
            while True:
                signal.pause()
        child.recv = forever
        return x
    """)


@pytest.mark.parametrize("in_session", [False, True], ids=["device", "session"])
def test_a_kernel_that_replaces_the_receive_loop_does_not_outlive_its_scoring(in_session, monkeypatch):
    """Every child the device was given (in a session, the determinism check's too) is gone when the
    scoring ends. In a session the check's rebuild finds the child deaf (its loop replaced by the probe
    run): a fault, and still no child left."""
    from pytest_overdub.render.sandbox.handle import ForkServer

    claimed, claim = [], ForkServer.claim

    def recording(self, *args, **kwargs):
        pid, sock = claim(self, *args, **kwargs)
        claimed.append(pid)
        return pid, sock

    monkeypatch.setattr(ForkServer, "claim", recording)
    with kernel_session() if in_session else contextlib.nullcontext():
        if in_session:
            with pytest.raises(KernelError, match="wall-clock backstop of 4 s"):
                sandboxed(LOOPER)
        else:
            dev = sandboxed(LOOPER)
            np.testing.assert_array_equal(dev.process(X, {}), X)
            dev.close()
    assert claimed and gone_within(claimed) == []


SCORER = """
import sys, numpy as np
from pytest_overdub.render.kernels import build_kernel_device
from pytest_overdub.render.sandbox import SandboxLimits
src = "def process(x, params, ctx):\\n    while True:\\n        pass\\n"
dev = build_kernel_device({"id": "t.spin", "kind": "effect", "kernel": src, "params": [], "version": 1},
                          sr=48000, tempo_bpm=120.0, seed=1, trusted=False,
                          limits=SandboxLimits(cpu_s=600, mem_mb=1024, wall_s=600.0))
print("calling", flush=True)
dev.process(np.zeros((2, 4800)), {})
"""


def _descendants(root: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    found, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parents.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def test_killing_the_scorer_mid_call_leaves_no_process():
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    scorer = subprocess.Popen([sys.executable, "-c", SCORER], stdout=subprocess.PIPE, env=env, cwd="/")
    try:
        assert scorer.stdout.readline().strip() == b"calling"
        time.sleep(0.3)  # the kernel is spinning in its child
        left = _descendants(scorer.pid)
        assert len(left) >= 2  # the fork server and the child (and a spare)
    finally:
        scorer.kill()
        scorer.wait()
    assert gone_within(left) == []


# -- the record of the confinement


def test_a_scoring_records_the_layers_that_confined_its_kernels():
    from pytest_overdub.bench.report import result_to_dict
    from pytest_overdub.bench.tasks import bundled_bench, score_task
    from pytest_overdub.bench.validity import load_answer
    from pytest_overdub.render.stems import PROCESS_CACHE

    bench = bundled_bench()
    task = bench.task("device-dotted-echo")
    sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    PROCESS_CACHE.clear()
    boxed = result_to_dict(score_task(task, sub, bench=bench, trusted=False))  # what --json prints
    trusted = result_to_dict(score_task(task, sub, bench=bench, trusted=True))
    baseline = result_to_dict(score_task(task, None, bench=bench, trusted=False))
    PROCESS_CACHE.clear()
    record = boxed["confinement"]
    assert record["kernels"] == "sandboxed" and record["weak_sandbox_allowed"] is False
    for layer in ("rlimit", "no_new_privs", "landlock(abi ", "seccomp") + (("uid(",) if os.geteuid() == 0 else ()):
        assert any(n.startswith(layer) for n in record["layers"]), layer
    assert not any(m.split(":")[0] in ("rlimit", "no_new_privs", "landlock", "seccomp") for m in record["missing"])
    assert trusted["confinement"] == {"kernels": "in-process"}
    assert baseline["confinement"] is None  # the start song defines no device
    assert boxed["score"] == trusted["score"] == 1.0


def test_a_kernel_is_refused_where_a_required_layer_is_missing():
    """A child that could not apply a required layer refuses the build before the kernel's source is
    read, with a message naming the layer and the opt-out; with the opt-out it builds."""
    import socket
    import threading

    from pytest_overdub.render import kernels
    from pytest_overdub.render.sandbox import child
    from pytest_overdub.render.sandbox.framing import recv, send

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    unmet = ["landlock: Landlock unavailable: Function not implemented"]
    serving = threading.Thread(target=child._serve_device, args=(theirs, kernels, unmet))
    serving.start()
    build = {"op": "build", "defn": effect("raise ValueError('the kernel ran')\n"), "sr": 48000,
             "tempo_bpm": 120.0, "seed": 1}
    try:
        send(ours, build)
        refused = recv(ours, time.monotonic() + 10)[0]
        send(ours, {**build, "weak": True})
        weak = recv(ours, time.monotonic() + 10)[0]
    finally:
        ours.close()
        serving.join(10)
    assert refused["ok"] is False and "the kernel ran" not in refused["error"]
    assert refused["error"].startswith("kernel test.confine refused: the sandbox could not apply landlock")
    assert "--overdub-weak-sandbox" in refused["error"] and "OVERDUB_WEAK_SANDBOX=1" in refused["error"]
    assert weak["ok"] is False and "ValueError: the kernel ran" in weak["error"]


def test_the_read_set_goes_around_what_must_stay_unread(tmp_path):
    """A root with a never-read directory beneath it (the wheel's bench data inside the package,
    site-packages inside the stdlib) is granted entry by entry around it, and cannot be listed."""
    from pytest_overdub.render.sandbox import readset

    pkg = tmp_path / "pytest_overdub"
    (pkg / "data" / "oracles").mkdir(parents=True)
    (pkg / "dsp").mkdir()
    (pkg / "kernels.py").write_text("")
    rules = dict(readset.rules([str(pkg)], [str(pkg / "data")]))
    assert rules == {str(pkg / "dsp"): readset.READ, str(pkg / "kernels.py"): readset.READ_FILE}
    roots, never = readset.read_set()
    assert str(CHECKOUT) in never and str(Path(np.__file__).resolve().parents[1]) in never
    assert str(CHECKOUT) not in roots and str(CHECKOUT / "pytest_overdub") in roots
    for root in map(Path, roots):  # (a checkout, a venv and a scratch dir may all live under /tmp in CI)
        assert not CHECKOUT.is_relative_to(root) and not tmp_path.is_relative_to(root), root
        assert not Path.home().is_relative_to(root), root
        assert not root.is_relative_to(CHECKOUT) or root.is_relative_to(CHECKOUT / "pytest_overdub"), root
