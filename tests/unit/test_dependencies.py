"""The declared runtime dependencies are exactly what the package imports.

Every third-party top-level module imported anywhere in ``pytest_overdub/`` (at module level or inside a
function) must come from a distribution in ``[project] dependencies`` or in an optional extra (``dev``
aside); every declared dependency must be imported by the package or listed under
``[tool.overdub.unimported-dependencies]`` with its reason. An optional extra's modules are imported only
inside functions, so the package imports without them.
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


def declared() -> tuple[set[str], dict[str, str]]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    deps = {_canonical(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]) for d in data["project"]["dependencies"]}
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


def optional_extras() -> set[str]:
    """The distributions of the optional extras users install (``[cluster]``, ...), the ``dev`` extra aside."""
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    extras = data["project"].get("optional-dependencies", {})
    return {_canonical(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0])
            for name, reqs in extras.items() if name != "dev" for d in reqs}


def test_every_imported_third_party_module_is_a_declared_dependency():
    deps, _ = declared()
    missing = {dist: where for dist, where in third_party(top_level_imports(PKG)).items()
               if dist not in deps | optional_extras()}
    assert missing == {}, "imported by pytest_overdub/ but not in pyproject.toml [project] dependencies or an extra"


def test_an_optional_extra_is_imported_only_inside_functions():
    extras = optional_extras()
    modules = {m for m, dists in packages_distributions().items() if any(_canonical(d) in extras for d in dists)}
    at_top = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            at_top += [f"{path.relative_to(PKG.parent)}: {n}" for n in names if n.split(".")[0] in modules]
    assert at_top == [], "an optional extra imported at module level: the package would not import without it"


def test_every_declared_dependency_is_imported_or_has_a_reason():
    deps, reasons = declared()
    imported = set(third_party(top_level_imports(PKG)))
    unexplained = sorted(deps - imported - set(reasons))
    assert unexplained == [], ("declared in pyproject.toml but never imported by pytest_overdub/; remove it or "
                               "give the reason under [tool.overdub.unimported-dependencies]")
    stale = sorted(set(reasons) & imported)
    assert stale == [], "listed as unimported but the package imports it"
    assert all(isinstance(r, str) and len(r.split()) >= 4 for r in reasons.values())
