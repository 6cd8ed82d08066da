"""Whether song-defined kernels run in-process (trusted) or in the sandbox: the environment's default; and
whether an untrusted kernel may run in a sandbox missing a required layer (the weak-sandbox opt-out).

Its own module so that the plugin can ask before anything imports numpy.
"""

from __future__ import annotations

import os

#: ``OVERDUB_TRUST_KERNELS=1`` (or ``true``/``yes``) runs kernels in-process, like ``--overdub-trust-kernels``.
ENV_TRUST = "OVERDUB_TRUST_KERNELS"


def trust_kernels_default() -> bool:
    """True when ``OVERDUB_TRUST_KERNELS`` is ``1`` (or ``true``/``yes``): run kernels in-process."""
    return os.environ.get(ENV_TRUST, "").strip().lower() in ("1", "true", "yes")


#: ``OVERDUB_WEAK_SANDBOX=1`` (or ``true``/``yes``), like ``--overdub-weak-sandbox``: untrusted kernels run
#: even where a required sandbox layer could not be applied (the report says which layers ran).
ENV_WEAK = "OVERDUB_WEAK_SANDBOX"
_WEAK: list[bool] = [False]


def allow_weak_sandbox(allowed: bool = True) -> None:
    """Let untrusted kernels run without a required sandbox layer, for this process (the options
    ``--overdub-weak-sandbox`` and ``overdub score --weak-sandbox``)."""
    _WEAK[0] = bool(allowed)


def weak_sandbox_allowed() -> bool:
    """True when :func:`allow_weak_sandbox` was called or ``OVERDUB_WEAK_SANDBOX`` is ``1``/``true``/``yes``."""
    return _WEAK[0] or os.environ.get(ENV_WEAK, "").strip().lower() in ("1", "true", "yes")
