"""The plugin keeps to pytest's public API: no ``_pytest`` imports, no private attribute of pytest's objects
read or written (once it edited the assertion-rewrite hook's private ``_must_rewrite`` set).

A private name (``_x``) may be reached only on ``self``, and only when this module defines it; ``getattr``
and friends may not name one at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_overdub

PLUGIN = Path(pytest_overdub.__file__).resolve().parent / "plugin.py"


def private_uses(source: str) -> list[str]:
    """Every reach into private state in ``source`` that the module does not own, as 'line: code'."""
    tree = ast.parse(source)
    own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    own |= {t.attr for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            wrong += [f"{node.lineno}: import {m}" for m in names if m.split(".")[0] == "_pytest"]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            mine = isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in own
            if not mine:
                wrong.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and str(node.args[1].value).startswith("_")):
            wrong.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(wrong, key=lambda w: int(w.split(":")[0]))


def test_the_checker_finds_each_kind_of_reach():
    source = ("import _pytest.config\nclass A:\n    def f(self, config):\n        self._mine = 1\n"
              "        hook = config.pluginmanager.rewrite_hook\n        hook._must_rewrite.discard('x')\n"
              "        getattr(hook, '_marked_for_rewrite_cache', None)\n        return self._mine, self._theirs\n")
    assert private_uses(source) == ["1: import _pytest.config", "6: hook._must_rewrite",
                                    "7: getattr(hook, '_marked_for_rewrite_cache', None)", "8: self._theirs"]


def test_the_plugin_reaches_no_private_pytest_state():
    assert private_uses(PLUGIN.read_text(encoding="utf-8")) == []
