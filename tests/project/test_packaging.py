"""An install from a wheel (``pip install .``, not the Makefile's editable one) holds
every module and every file the host reads at run time: setuptools packs only the
packages ``pyproject.toml`` lists and the data files its globs match."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path
from typing import Any

from tests.project.test_layout import REPO, ROOTS, module_name

# Files of the host's folders that only a clone uses: `make demo`'s page.
CLONE_ONLY = frozenset({"host/demo/outdoor-shop.html"})


def _setuptools() -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    return config["tool"]["setuptools"]


def _package_of(folder: Path) -> str:
    return ".".join(module_name(folder / "__init__.py"))


def _files() -> list[Path]:
    return sorted(
        path
        for root in ROOTS.values()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )


def test_every_folder_of_modules_is_a_listed_package() -> None:
    """Each folder holding Python modules is in ``packages``, and each listed package
    is a folder of the tree: a package left out is missing from every wheel."""
    listed = set(_setuptools()["packages"])
    with_modules = {_package_of(p.parent) for p in _files() if p.suffix == ".py"}
    with_data = {_package_of(p.parent) for p in _files() if p.suffix != ".py"}
    assert with_modules - listed == set()
    assert listed - with_modules - with_data == set()


def test_every_file_read_at_run_time_is_package_data() -> None:
    """Each file beside the modules that is not Python (page-side scripts, FORMAT.md)
    is matched by its package's ``package-data`` globs, or is one a clone alone uses."""
    config = _setuptools()
    data: dict[str, list[str]] = config["package-data"]
    listed = set(config["packages"])
    left_out = []
    for path in _files():
        if path.suffix == ".py" or str(path.relative_to(REPO)) in CLONE_ONLY:
            continue
        package = _package_of(path.parent)
        globs = data.get(package, [])
        if package not in listed or not any(fnmatch.fnmatch(path.name, g) for g in globs):
            left_out.append(str(path.relative_to(REPO)))
    assert left_out == []
