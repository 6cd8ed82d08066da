"""What a fresh interpreter has imported after some statements: the package's promise that importing it (or
loading its tasks) touches no heavy dependency until a task runs."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest_overdub

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent


def modules_loaded(statements: str, *, roots: tuple[str, ...]) -> list[str]:
    """The modules whose top-level package is one of ``roots`` that a new interpreter (run from the checkout)
    holds after running ``statements``, sorted."""
    code = f"import sys\n{statements}\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {roots!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return ast.literal_eval(out.stdout.strip())
