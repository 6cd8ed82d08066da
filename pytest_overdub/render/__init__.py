"""The canonical offline renderer (docs/rendering.md). Importing this package imports nothing heavy: its
names load on first use (PEP 562), so the plugin and the ops layer never pull in numpy, and the kernel
sandbox's fork server, which imports :mod:`.kernels` and :mod:`.sandbox` from here, never loads the
engine, numba or pydantic: a smaller process forks and exits faster, once per song-defined device."""

from __future__ import annotations

from importlib import import_module

#: public name -> the submodule that defines it
_LAZY = {"render": "engine", "Render": "engine", "RenderWarning": "engine", "device_seed": "engine",
         "StemCache": "stems", "PROCESS_CACHE": "stems"}

__all__ = ["render", "Render", "RenderWarning", "StemCache", "PROCESS_CACHE", "device_seed"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
