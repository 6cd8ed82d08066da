"""The declared runtime dependencies are exactly what the package imports.

Every third-party top-level module imported anywhere in ``pytest_overdub/`` (at module level or inside a
function) must come from a distribution in ``[project] dependencies``; every declared dependency must be
imported by the package or listed under ``[tool.overdub.unimported-dependencies]`` with its reason.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest_overdub

PKG = Path(pytest_overdub.__file__).resolve().parent
PYPROJECT = PKG.parent / "pyproject.toml"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level_imports(root: Path) -> dict[str, str]:
    """Absolute top-level module names imported by the ``.py`` files under ``root`` -> one file that does."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(root.parent)))
    return found


def third_party(imports: dict[str, str]) -> dict[str, str]:
    """The imports that are neither the standard library nor this package, as distribution -> file."""
    dists = packages_distributions()
    out: dict[str, str] = {}
    for module, where in imports.items():
        if module in sys.stdlib_module_names or module in ("__future__", "pytest_overdub"):
            continue
        for dist in dists.get(module, [module]):
            out.setdefault(_canonical(dist), f"{module} (in {where})")
    return out


def _names(requirements: list[str]) -> set[str]:
    return {_canonical(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]) for d in requirements}


def optional() -> set[str]:
    """The distributions of the optional extras users install for a feature (``dev`` is not one)."""
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"].get("optional-dependencies", {})
    return set().union(*(_names(reqs) for name, reqs in extras.items() if name != "dev"))


def declared() -> tuple[set[str], dict[str, str]]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    deps = _names(data["project"]["dependencies"])
    reasons = data.get("tool", {}).get("overdub", {}).get("unimported-dependencies", {})
    return deps, {_canonical(k): v for k, v in reasons.items()}


def test_helpers_see_a_function_level_import_and_skip_the_standard_library(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("import os, json\nfrom . import x\ndef f():\n    from numba import njit\n"
                              "    import scipy.signal\n", encoding="utf-8")
    imports = top_level_imports(pkg)
    assert set(imports) == {"os", "json", "numba", "scipy"}
    assert set(third_party(imports)) == {"numba", "scipy"}


def test_every_imported_third_party_module_is_a_declared_dependency():
    deps, _ = declared()
    allowed = deps | optional()  # an optional extra's module is imported lazily, by the feature that needs it
    missing = {dist: where for dist, where in third_party(top_level_imports(PKG)).items() if dist not in allowed}
    assert missing == {}, ("imported by pytest_overdub/ but not in pyproject.toml [project] dependencies or an "
                           "optional extra")


def test_every_declared_dependency_is_imported_or_has_a_reason():
    deps, reasons = declared()
    imported = set(third_party(top_level_imports(PKG))) - optional()
    unexplained = sorted(deps - imported - set(reasons))
    assert unexplained == [], ("declared in pyproject.toml but never imported by pytest_overdub/; remove it or "
                               "give the reason under [tool.overdub.unimported-dependencies]")
    stale = sorted(set(reasons) & imported)
    assert stale == [], "listed as unimported but the package imports it"
    assert all(isinstance(r, str) and len(r.split()) >= 4 for r in reasons.values())
