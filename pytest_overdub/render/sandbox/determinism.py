"""No clock and no unseeded randomness inside a sandbox child: what keeps a kernel's output a function
of the song alone (the same song gives the same samples on every run, on every machine).

Two measures in the child, and a check in the scorer (:mod:`.client`):

* :func:`deny_clocks_and_entropy` (once per child, before any kernel code; the fork server finds the
  places to patch once, :func:`plan_denials`): every clock in ``time`` (wall, monotonic, performance
  counter, CPU time), ``os.times``, ``resource.getrusage``, interval timers (``signal.getitimer`` and
  ``setitimer``), the pid (``os.getpid``, ``os.getppid``), ``os.urandom``/``os.getrandom`` and a
  ``random.Random`` seeded from the system (``random.seed()``, ``random.Random()``,
  ``random.SystemRandom``, and so ``np.random.default_rng()`` without a seed, whose entropy comes from
  there) are replaced by a function that raises :class:`Undetermined` with what to use instead. They are
  replaced where they are bound, in **every loaded module** (``random._urandom``, ``threading._time``,
  ... as well as ``time.time``), so a kernel that reaches ``time`` or ``os`` through another module's
  attribute finds the same refusal.
* :func:`seed_globals` (before each build): numpy's legacy global ``RandomState`` (``np.random.rand``,
  ``np.random.seed``'s state) and Python's ``random`` module are seeded from the device's seed, so what
  they give is a function of the device and the track, like ``ctx.rng()``.

Neither is a boundary: the child runs the kernel in the same interpreter, and C-level clocks
(``datetime.now``, ``np.datetime64('now')``), object addresses, or a module loaded afresh
(``importlib``) cannot be reached from Python to be refused. The scorer's **determinism check** is what
enforces the rule: it runs each song-defined device of a scoring twice, in two fresh children, on the
same short probe, and faults it when the outputs differ (:meth:`.client.SandboxedKernel.check_determinism`).
Object addresses are the same in both children (forked from one server), so randomness drawn from them
passes the check; the refusals above are what keep the common cases out.
"""

from __future__ import annotations

import os
import random
import sys
import time

_USE_INSTEAD = {
    "clock": "a kernel has no clock (the same song must give the same samples); count time in frames "
             "(ctx.sr, the frame count) and beats (ctx.beat_s)",
    "pid": "a kernel's process id differs on every run; use ctx.seed for a number that is the device's own",
    "entropy": "a kernel gets no unseeded randomness (np.random.default_rng() and random.SystemRandom without "
               "a seed read it too); use ctx.rng(*keys) (a numpy Generator seeded from the device and the "
               "track) or dsp.noise(..., seed=ctx.seed)",
}
_CLOCKS = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "process_time",
           "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime", "clock_gettime_ns")
_NOW_DEFAULT = ("localtime", "gmtime", "ctime", "asctime", "strftime")  # the clock when given no time


class Undetermined(RuntimeError):
    """A kernel asked for something that differs from run to run (a clock, the pid, system entropy)."""


def _refusal(name: str, why: str):
    def refused(*args, **kwargs):
        raise Undetermined(f"{name} is not available to kernels: {_USE_INSTEAD[why]}")

    refused.__name__ = refused.__qualname__ = name.rsplit(".", 1)[-1]
    return refused


def _needs_time(name: str, fn, at: int):
    """``fn`` refused when called without its time argument (position ``at``), which means "now"."""
    def wrapped(*args, **kwargs):
        if len(args) <= at and not kwargs:
            raise Undetermined(f"{name}() without a time is not available to kernels: {_USE_INSTEAD['clock']}")
        return fn(*args, **kwargs)

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


def _seeded_only(seed_fn):
    def seed(self, a=None, version=2):
        if a is None:
            raise Undetermined(f"random.seed() without a seed is not available to kernels: "
                               f"{_USE_INSTEAD['entropy']}")
        return seed_fn(self, a, version)

    return seed


def _replacements() -> dict[int, tuple[object, object]]:
    """``id(original) -> (original, refusal)`` for everything :func:`deny_clocks_and_entropy` replaces
    (the originals are kept alive while it runs, so no id is reused meanwhile)."""
    out: dict[int, tuple[object, object]] = {}
    for name in _CLOCKS:
        fn = getattr(time, name, None)
        if fn is not None:
            out[id(fn)] = (fn, _refusal(f"time.{name}", "clock"))
    for name in _NOW_DEFAULT:
        fn = getattr(time, name, None)
        if fn is not None:
            out[id(fn)] = (fn, _needs_time(f"time.{name}", fn, 1 if name == "strftime" else 0))
    for name, why in (("times", "clock"), ("getpid", "pid"), ("getppid", "pid"), ("urandom", "entropy"),
                      ("getrandom", "entropy")):
        fn = getattr(os, name, None)
        if fn is not None:
            out[id(fn)] = (fn, _refusal(f"os.{name}", why))
    resource = sys.modules.get("resource")
    if resource is not None:
        out[id(resource.getrusage)] = (resource.getrusage, _refusal("resource.getrusage", "clock"))
    import signal

    for name in ("getitimer", "setitimer"):  # a timer's time left is a clock
        fn = getattr(signal, name)
        out[id(fn)] = (fn, _refusal(f"signal.{name}", "clock"))
    return out


#: Where the fork server's modules bind an original (module dict, name), and which modules it had:
#: found once by :func:`plan_denials`, so a child replaces them in microseconds instead of scanning
#: every loaded module (about 20 ms).
_PLAN: dict = {}


def plan_denials() -> None:
    """In the fork server, after its imports: record every place a loaded module binds something
    :func:`deny_clocks_and_entropy` replaces. Holds the module dicts, not the originals."""
    swap = _replacements()
    sites = [(space, key) for space in _module_dicts(sys.modules.values())
             for key, value in space.items() if id(value) in swap and swap[id(value)][0] is value]
    _PLAN.update(modules=frozenset(sys.modules), sites=sites)


def _module_dicts(modules) -> list[dict]:
    return [d for d in (getattr(m, "__dict__", None) for m in list(modules)) if isinstance(d, dict)]


def deny_clocks_and_entropy() -> None:
    """Replace every clock, the pid and system entropy with a refusal, in every loaded module (see the
    module docstring): the places :func:`plan_denials` found, and every module loaded since (or every
    module, without a plan). Run once in a child, after its own setup and before any kernel code."""
    swap = _replacements()
    planned = _PLAN.get("modules", frozenset())
    sites = list(_PLAN.get("sites", ()))
    for space in _module_dicts(m for name, m in list(sys.modules.items()) if name not in planned):
        sites.extend((space, key) for key in list(space))
    for space, key in sites:
        value = space.get(key)
        hit = swap.get(id(value))
        if hit is not None and hit[0] is value:
            space[key] = hit[1]
    _PLAN.clear()
    # random.Random() and random.seed() seed from the system in C; SystemRandom reads random._urandom,
    # replaced above (and np.random.default_rng() without a seed draws its entropy from SystemRandom).
    random.Random.seed = _seeded_only(random.Random.seed)
    random.seed = random._inst.seed  # the module's functions are bound methods of one hidden Random


def seed_globals(seed: int) -> None:
    """Seed numpy's legacy global generator and Python's ``random`` from the device's ``seed``."""
    import numpy as np

    np.random.seed(int(seed) % 2**32)
    random.seed(int(seed))
