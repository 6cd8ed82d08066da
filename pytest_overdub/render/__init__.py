"""The canonical offline renderer (SPEC section 6). Importing this package imports numpy; the plugin and
the ops layer never import it at module level, only when something is rendered."""

from .engine import Render, RenderWarning, device_seed, render
from .stems import PROCESS_CACHE, StemCache

__all__ = ["render", "Render", "RenderWarning", "StemCache", "PROCESS_CACHE", "device_seed"]
