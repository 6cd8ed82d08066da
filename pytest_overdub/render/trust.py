"""Whether song-defined kernels run in-process (trusted) or in the sandbox: the environment's default.

Its own module so that the plugin can ask before anything imports numpy.
"""

from __future__ import annotations

import os

#: ``OVERDUB_TRUST_KERNELS=1`` (or ``true``/``yes``) runs kernels in-process, like ``--overdub-trust-kernels``.
ENV_TRUST = "OVERDUB_TRUST_KERNELS"


def trust_kernels_default() -> bool:
    """True when ``OVERDUB_TRUST_KERNELS`` is ``1`` (or ``true``/``yes``): run kernels in-process."""
    return os.environ.get(ENV_TRUST, "").strip().lower() in ("1", "true", "yes")
