"""The scorer runtime: the one owner of what scoring changes about its process.

The ``overdub`` command and the pytest plugin (in a session that scores or self-checks) call :func:`enter`
before anything renders. Code that uses the layers as a library (``render()``, ``measure()``,
``score_task()``) changes nothing about the process: no malloc tuning, no garbage-collector freeze, no
process-wide stem cache kept between calls, no notice on stderr.

What :func:`enter` sets, for the life of the process (a second :func:`enter` changes nothing more):

* glibc's malloc tuning (:mod:`.render.heap`), applied at once: freed memory is kept for reuse instead of
  being mapped and zeroed again; ``OVERDUB_MALLOC_TUNING=0`` leaves malloc alone.
* the process stem cache (:data:`.render.stems.PROCESS_CACHE`), sized from ``OVERDUB_STEM_CACHE_MB``,
  which ``render()`` reuses across renders while the runtime is active (a library ``render()`` keeps its
  stems for that one call).
* the scorer's memo of renders and measured figures (:data:`.bench.context.PROCESS_MEMO`) and of audio
  tasks' inputs (:data:`.bench.audio.inputs.INPUT_MEMO`), kept by content while the runtime is active,
  and the figures of those read-only inputs, kept by identity (:mod:`.measure.kept`).
* one BLAS thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set to 1 where
  unset), when numpy is not yet imported (BLAS reads them as it loads): the few matrix products in the
  meters (the true-peak filter bank) and devices are short, and a second BLAS thread only waits, spinning,
  on a core an xdist worker needs (a mix task's rules took 32 CPU s for 23 s of wall time with OpenBLAS's
  default threads, 23 CPU s with one). No value depends on it: dot products are summed outside BLAS
  (:mod:`.dsp.sums`).
* a one-line notice on stderr the first time numba compiles the DSP loops instead of loading them from its
  cache (:mod:`.dsp.jit`).
* the garbage collector at the end: :func:`end` (the plugin's ``pytest_unconfigure``) or the interpreter's
  exit (the command) freezes the heap once, so the exit-time collections skip the scorer's long-lived
  objects (:mod:`.exiting`); a later :func:`enter` in the same process gives them back to the collector.

The kernel sandbox's fork server is started by the plugin ahead of need, or by the first sandboxed device,
and stopped when the interpreter exits (:mod:`.render.sandbox`).

Every environment switch is listed in :data:`ENV_SWITCHES` and checked by :func:`enter`: a value outside
what is allowed is one :class:`~pytest_overdub.errors.OverdubError` naming the variable, the value and
what is allowed, never a silent default. Importing this module imports neither numpy nor numba.
"""

from __future__ import annotations

import os
import threading

from .errors import OverdubError

#: name -> (what it does, the values allowed). The runtime checks them; the modules named read them.
ENV_SWITCHES: dict[str, tuple[str, str]] = {
    "OVERDUB_TRUST_KERNELS": ("run song-defined device kernels in-process instead of the sandbox "
                              "(render.trust; like --overdub-trust-kernels)", "1, true, yes, 0, false, no or empty"),
    "OVERDUB_STEM_CACHE_MB": ("the size of the scorer's process stem cache in MB (render.stems; "
                              "default 1536, 0 caches nothing)", "a number >= 0"),
    "OVERDUB_MALLOC_TUNING": ("0 leaves glibc's malloc at its defaults (render.heap)", "0 or 1"),
    "OVERDUB_WEAK_SANDBOX": ("run untrusted kernels even where a required sandbox layer could not be applied "
                             "(render.trust; like --overdub-weak-sandbox)", "1, true, yes, 0, false, no or empty"),
    "OVERDUB_CACHE_DIR": ("the folder whose audio/ holds audio tasks' rendered inputs and the bench's made "
                          "answers (bench.audio.inputs; default $XDG_CACHE_HOME/pytest-overdub or "
                          "~/.cache/pytest-overdub)", "a folder path, or empty for the default"),
}

_TRUTHY, _FALSY = ("1", "true", "yes"), ("", "0", "false", "no")
_lock = threading.Lock()
_owner: list[str] = []


def check_environment(environ: os._Environ | dict[str, str] | None = None) -> None:
    """Raise :class:`OverdubError` for the first switch of :data:`ENV_SWITCHES` set to a value not allowed."""
    env = os.environ if environ is None else environ
    for name, (_, allowed) in ENV_SWITCHES.items():
        raw = env.get(name)
        if raw is None or _allowed(name, raw.strip().lower()):
            continue
        raise OverdubError(f"environment variable {name}={raw!r} is not allowed; use {allowed}")


def _allowed(name: str, value: str) -> bool:
    if name == "OVERDUB_CACHE_DIR":
        return True  # any path; a folder that cannot be written is an error where it is written
    if name in ("OVERDUB_TRUST_KERNELS", "OVERDUB_WEAK_SANDBOX"):
        return value in _TRUTHY + _FALSY
    if name == "OVERDUB_MALLOC_TUNING":
        return value in ("0", "1", "")
    try:
        return float(value) >= 0.0
    except ValueError:
        return value == ""


def enter(owner: str) -> None:
    """Make this process a scorer (idempotent); ``owner`` says who did (``"overdub"``, ``"pytest"``).

    Raises :class:`OverdubError` when an environment switch holds a value that is not allowed."""
    check_environment()
    from .exiting import thaw_heap

    thaw_heap()  # an earlier session in this process froze the heap for its exit (see end())
    with _lock:
        if _owner:
            return
        _owner.append(owner)
    from .render.heap import tune_malloc

    tune_malloc()  # ctypes only: entering imports neither numpy nor numba
    _one_blas_thread()
    if owner == "overdub":
        from .exiting import freeze_heap_at_exit

        freeze_heap_at_exit()  # the interpreter's shutdown collections would walk the scorer's whole heap


#: The thread-count variables of the BLAS libraries numpy and scipy load (OpenBLAS, its OpenMP build, MKL).
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread() -> None:
    """One BLAS thread for this process and the workers it starts, unless numpy is already loaded (too late:
    BLAS read its thread count then) or the user set a count (theirs is kept)."""
    import sys

    if "numpy" in sys.modules:
        return
    for name in BLAS_THREAD_VARS:
        os.environ.setdefault(name, "1")


def active() -> bool:
    """True once :func:`enter` has run in this process: ``render()`` then keeps stems between renders."""
    return bool(_owner)


def owner() -> str | None:
    """Who entered the runtime (``"overdub"``, ``"pytest"``), or None for a library process."""
    return _owner[0] if _owner else None


def end() -> None:
    """The scoring is over and the process is about to end: freeze the heap for the exit-time collections.

    The plugin calls it from ``pytest_unconfigure``; in a program that runs ``pytest.main()`` and goes on,
    the next :func:`enter` thaws the heap again. No-op when the runtime was not entered."""
    if _owner:
        from .exiting import freeze_heap

        freeze_heap()


def stem_cache_bytes() -> int:
    """The process stem cache's size from ``OVERDUB_STEM_CACHE_MB`` (checked), default 1.5 GB."""
    raw = os.environ.get("OVERDUB_STEM_CACHE_MB", "").strip()
    if not raw:
        return int(1.5 * 1024 ** 3)
    check_environment({"OVERDUB_STEM_CACHE_MB": raw})
    return int(float(raw) * 1024 * 1024)
