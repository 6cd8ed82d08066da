"""The sandbox's read set: what a child may read once Landlock is on (:func:`.layers.layer_landlock`).

Exactly the interpreter's standard library, numpy and scipy (with their wheels' bundled libraries), the
``pytest_overdub`` package's own directory and the system's shared libraries; never site-packages beyond
numpy and scipy, the checkout the package sits in, the bench data a wheel carries, the submission or a
home directory. Landlock grants whole trees, so a root with a never-read directory beneath it (the stdlib
holds site-packages in most installs) is granted entry by entry around it. The fork server computes it
once and builds the ruleset its children inherit.
"""

from __future__ import annotations

import os
import stat
import sys

import pytest_overdub

#: Landlock access rights (linux/landlock.h): reading files, and reading (listing) directories too.
READ_FILE = 1 << 2
READ = READ_FILE | (1 << 3)


def read_set() -> tuple[list[str], list[str]]:
    """What a child may read: ``(roots, never)``. Roots: the interpreter's stdlib (with lib-dynload),
    numpy and scipy (and their wheels' vendored ``<name>.libs``), the ``pytest_overdub`` package
    directory, the system's shared libraries (the multiarch library directories and the directories of
    the libraries this process has mapped) and ``/etc/ld.so.cache``. Never, even beneath a root: every
    site-packages directory (bar numpy's and scipy's own, roots themselves), the checkout the package
    sits in and, in an installed wheel, the bench data it carries (``pytest_overdub/data``); a root with
    one of them beneath it is granted entry by entry around it (and cannot be listed)."""
    import importlib.util
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    roots = [paths["stdlib"], paths["platstdlib"], os.path.dirname(os.path.abspath(pytest_overdub.__file__))]
    never = {paths["purelib"], paths["platlib"], *site.getsitepackages(), site.getusersitepackages(),
             os.path.dirname(roots[-1])}
    if os.path.isdir(os.path.join(roots[-1], "data")):
        never.add(os.path.join(roots[-1], "data"))  # an installed wheel's copy of the bench (tasks, oracles)
    never.update(p for p in sys.path if p and os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages"))
    for name in ("numpy", "scipy"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            pkg = list(spec.submodule_search_locations)[0]
            roots += [pkg, pkg + ".libs", os.path.join(os.path.dirname(pkg), name + ".libs")]
    arch = sysconfig.get_config_var("MULTIARCH") or f"{os.uname().machine}-linux-gnu"
    roots += ["/lib64", "/usr/lib64", f"/lib/{arch}", f"/usr/lib/{arch}", "/etc/ld.so.cache"]
    roots += sorted(_mapped_dirs() - {sys.prefix, sys.base_prefix, sys.exec_prefix})
    real = lambda p: os.path.realpath(p)
    never_real = {real(p) for p in never if p} - {"/"}
    return sorted({real(p) for p in roots if os.path.exists(p)} - never_real), sorted(never_real)


def _mapped_dirs() -> set[str]:
    """The directories of the shared libraries this process has mapped, outside the Python install
    (those are covered by the stdlib, numpy and scipy roots)."""
    installs = tuple(os.path.realpath(p) + "/" for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    dirs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.rstrip("\n").split(None, 5)[-1] if line.count(" ") >= 5 else ""
            if path.startswith("/") and ".so" in os.path.basename(path):
                d = os.path.realpath(os.path.dirname(path))
                if not (d + "/").startswith(installs):
                    dirs.add(d)
    return dirs


def rules(roots: list[str], never: list[str]) -> list[tuple[str, int]]:
    """``(path, access)`` rules for ``roots``: a whole tree where nothing of ``never`` lies beneath it,
    else each entry of it but those (so the directory itself cannot be listed)."""
    rules: list[tuple[str, int]] = []
    never = set(never)

    def beneath(a: str, b: str) -> bool:
        return a == b or a.startswith(b.rstrip("/") + "/")

    def add(path: str) -> None:
        if path in never:  # a root is taken as given (numpy's lies in site-packages); entries are not
            return
        if not os.path.isdir(path):
            rules.append((path, READ_FILE))
        elif not any(beneath(n, path) for n in never):
            rules.append((path, READ))
        else:
            for entry in sorted(os.listdir(path)):
                add(os.path.realpath(os.path.join(path, entry)))

    for root in roots:
        add(root)
    return rules


def needs_read_search(roots: list[str]) -> bool:
    """True when ``nobody`` could not read some root (a directory above it without ``o+x``)."""
    for root in roots:
        d = root if os.path.isdir(root) else os.path.dirname(root)
        while d and d != "/":
            if not os.stat(d).st_mode & stat.S_IXOTH:
                return True
            d = os.path.dirname(d)
    return False
