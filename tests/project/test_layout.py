"""The layout holds: each package is used through its face, imports only the floors
below it, says so in its ``__init__`` (and the list there is what it imports), and no
module of the host or of the extension outgrows 900 lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

REPO = Path(__file__).resolve().parents[2]
# Where each importable name lives: ``host/`` imports as ``trimtab``.
ROOTS = {"trimtab": REPO / "host", "pycdp_bridge": REPO / "pycdp_bridge"}
# A smoke alarm, not a room size: a module is as long as what it is needs; one past this
# is likely two things, and is split by meaning (never into halves of one object).
MAX_LINES = 900
EXTENSION = REPO / "extension"

# What each package may import, floor by floor, the way the data flows:
# doors (native, link) and the command line on top, the browser's state and the
# envelope under them, then the tools (the catalogue), the driver (acting like a
# person), one tab, the tracker, the pipeline and CDP.
ALLOWED: dict[str, frozenset[str]] = {
    "pycdp_bridge": frozenset(),
    "trimtab.sites": frozenset(),
    "trimtab.pipeline": frozenset({"pycdp_bridge", "trimtab.sites"}),
    "trimtab.tracker": frozenset(),
    "trimtab.wire": frozenset(),
    "trimtab.tab": frozenset({"pycdp_bridge", "trimtab.pipeline"}),
    "trimtab.driver": frozenset({"pycdp_bridge", "trimtab.pipeline", "trimtab.tab"}),
    "trimtab.tools": frozenset(
        {"pycdp_bridge", "trimtab.driver", "trimtab.pipeline", "trimtab.tab", "trimtab.tracker"}
    ),
    "trimtab.envelope": frozenset({"trimtab.sites", "trimtab.wire"}),
    "trimtab.routines": frozenset({"trimtab.pipeline", "trimtab.sites"}),
    "trimtab.browser": frozenset(
        {
            "pycdp_bridge",
            "trimtab.envelope",
            "trimtab.pipeline",
            "trimtab.routines",
            "trimtab.sites",
            "trimtab.tab",
            "trimtab.tools",
            "trimtab.tracker",
            "trimtab.wire",
        }
    ),
    # The link's client (``trimtab mcp``, the command line) stands on the wire alone;
    # its server runs inside the host, over the browser's state.
    "trimtab.link": frozenset({"trimtab.wire"}),
    "trimtab.link.server": frozenset(
        {"trimtab.browser", "trimtab.envelope", "trimtab.link", "trimtab.wire"}
    ),
    "trimtab.install": frozenset(),
    "trimtab.native": frozenset(
        {
            "trimtab.browser",
            "trimtab.envelope",
            "trimtab.install",
            "trimtab.link",
            "trimtab.link.server",
            "trimtab.routines",
            "trimtab.sites",
            "trimtab.wire",
        }
    ),
    "trimtab.mcp": frozenset({"trimtab.link", "trimtab.tools", "trimtab.wire"}),
    "trimtab.cli": frozenset(
        {
            "pycdp_bridge",
            "trimtab.install",
            "trimtab.link",
            "trimtab.mcp",
            "trimtab.pipeline",
            "trimtab.tab",
            "trimtab.tools",
            "trimtab.wire",
        }
    ),
    # The package's own face imports nothing: each part is reached through its own face.
    "trimtab": frozenset(),
    # ``python -m trimtab`` is the command line, and nothing else.
    "trimtab.__main__": frozenset({"trimtab.cli"}),
}


@attrs.frozen
class Import:
    """One imported module (or name of a package) of one source file."""

    source: str  # path relative to the repo, with the line
    module: tuple[str, ...]  # the importing module's dotted name
    target: tuple[str, ...]  # the imported module's dotted name, or a package + name


def module_name(path: Path) -> tuple[str, ...]:
    for top, root in ROOTS.items():
        if path.is_relative_to(root):
            parts = (top, *path.relative_to(root).with_suffix("").parts)
            return parts[:-1] if parts[-1] == "__init__" else parts
    raise ValueError(f"{path} is outside {sorted(ROOTS)}")


def imports(path: Path) -> Iterator[Import]:
    """Every import of our own packages in ``path``, resolved to absolute names."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = tuple(alias.name.split("."))
                if target[0] in ROOTS:
                    yield Import(where, module, target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = base + tuple(node.module.split(".") if node.module else ())
            else:
                target = tuple((node.module or "").split("."))
            if target[0] not in ROOTS:
                continue
            if node.module is None:  # from . import _xml as xml
                for alias in node.names:
                    yield Import(where, module, (*target, alias.name))
            else:
                yield Import(where, module, target)


def package_of(name: tuple[str, ...]) -> str:
    """The package a module belongs to for the floors: ``trimtab.<part>`` (or a package
    inside a part, ``trimtab.link.server``), or ``pycdp_bridge``, or ``trimtab`` itself
    for the top-level modules."""
    if name[0] == "pycdp_bridge":
        return "pycdp_bridge"
    if name == ("trimtab", "__main__"):
        return "trimtab.__main__"
    if len(name) > 2 and (ROOTS["trimtab"] / name[1] / name[2] / "__init__.py").is_file():
        return ".".join(name[:3])
    if len(name) > 1 and (ROOTS["trimtab"] / name[1]).is_dir():
        return f"trimtab.{name[1]}"
    return "trimtab"


def private_reach(found: Import) -> str | None:
    """The private module ``found`` reaches into outside its own package, if it does."""
    for i, part in enumerate(found.target[1:], 1):
        if part.startswith("_") and not part.startswith("__"):
            owner = found.target[:i]
            importer = found.module
            if importer[: len(owner)] != owner:
                return ".".join(found.target[: i + 1])
            return None
    return None


def sources() -> list[Path]:
    return sorted(p for root in ROOTS.values() for p in root.rglob("*.py"))


def test_no_package_reaches_into_another_packages_private_modules() -> None:
    """A module imports another package's parts through its face (``__init__``) only."""
    reaches = [
        f"{found.source}: {reached}"
        for path in sources()
        for found in imports(path)
        if (reached := private_reach(found)) is not None
    ]
    assert reaches == []


def test_each_package_imports_only_the_floors_below_it() -> None:
    """Each package imports only the packages its floor allows (ALLOWED above)."""
    wrong = []
    for path in sources():
        for found in imports(path):
            mine, theirs = package_of(found.module), package_of(found.target)
            if mine != theirs and theirs not in ALLOWED.get(mine, frozenset()):
                wrong.append(f"{found.source}: {mine} imports {'.'.join(found.target)}")
    assert wrong == []


def test_every_package_face_says_what_it_may_import() -> None:
    """Every package's ``__init__`` docstring has a "May import" sentence, and every
    package is on the floor plan."""
    faces = [p for root in ROOTS.values() for p in root.rglob("__init__.py")]
    missing = []
    for face in faces:
        name = ".".join(module_name(face))
        doc = ast.get_docstring(ast.parse(face.read_text(encoding="utf-8"))) or ""
        if name in ALLOWED and "May import" not in doc and "Imports nothing" not in doc:
            missing.append(name)
        if name not in ALLOWED and not name.endswith(".js"):
            missing.append(f"{name} (not on the floor plan)")
    assert missing == []


def private_name(name: str) -> bool:
    """A name private to its module: one leading underscore (not a dunder)."""
    return name.startswith("_") and not name.startswith("__") and name != "_"


def defined_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, assigned names and
    attributes (``self._x = ...``, attrs fields ``_x: int``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return {name for name in names if private_name(name)}


def sibling_reaches(modules: dict[Path, ast.AST]) -> list[str]:
    """Where a module uses a private name of another module of its package: an
    attribute ``x._name`` (``x`` not ``self`` or ``cls``) that a sibling defines, or
    ``from ._sibling import _name``."""
    defined = {path: defined_names(tree) for path, tree in modules.items()}
    found = []
    for path, tree in modules.items():
        siblings = [p for p in modules if p.parent == path.parent and p != path]
        where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and node.module:
                found += [
                    f"{where}:{node.lineno}: from .{node.module} import {alias.name}"
                    for alias in node.names
                    if private_name(alias.name)
                ]
            if not isinstance(node, ast.Attribute) or not private_name(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if any(node.attr in defined[sibling] for sibling in siblings):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_uses_a_siblings_private_names() -> None:
    """No module of the host reaches into the private names of another module of its
    package (a private attribute of an object it is handed, or an import of a private
    name): what the modules of a package share is public within it. (pycdp_bridge is
    being split apart, issue 36 point 3; its target's ``_channel`` waits for that.)"""
    modules = {
        path: ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(ROOTS["trimtab"].rglob("*.py"))
    }
    assert sibling_reaches(modules) == []


def test_the_sibling_check_finds_a_reach_and_leaves_self_alone(tmp_path: Path) -> None:
    """The sibling check reports an object's private attribute used from another module
    and a private name imported from a sibling, and leaves ``self._x`` alone."""
    owner = tmp_path / "_owner.py"
    user = tmp_path / "_user.py"
    owner.write_text("class A:\n    def __init__(self):\n        self._x = 1\n_Y = 2\n")
    user.write_text("from ._owner import _Y\ndef f(a):\n    return a._x\n")
    modules = {path: ast.parse(path.read_text()) for path in (owner, user)}
    assert sibling_reaches(modules) == [
        f"{user}:1: from ._owner import _Y",
        f"{user}:3: a._x",
    ]


@pytest.mark.parametrize(
    "path",
    sources() + sorted(EXTENSION.rglob("*.js")),
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_no_module_outgrows_its_room(path: Path) -> None:
    """No module of the host, of pycdp_bridge or of the extension is over 900 lines."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(REPO)} has {lines} lines"


def stated_imports(doc: str) -> frozenset[str]:
    """The packages a face's "May import" (or "Imports nothing") sentence names, up to
    its end or a semicolon: each ``trimtab.<part>`` (or package inside one) and
    ``pycdp_bridge`` in it, whatever else it says about them (Pillow, "the catalogue
    only")."""
    found = re.search(r"(May import|Imports nothing)(.*?)(;|\.\s|\.$|$)", doc, re.DOTALL)
    if found is None:
        return frozenset()
    named = re.findall(r"\b(trimtab(?:\.[a-z_]+)+|pycdp_bridge)\b", found.group(2))
    return frozenset(package_of(tuple(name.split("."))) for name in named)


def real_imports() -> dict[str, frozenset[str]]:
    """The other packages each package's modules import, by package."""
    real: dict[str, set[str]] = {name: set() for name in ALLOWED}
    for path in sources():
        for found in imports(path):
            mine, theirs = package_of(found.module), package_of(found.target)
            if mine != theirs:
                real.setdefault(mine, set()).add(theirs)
    return {name: frozenset(names) for name, names in real.items()}


def test_the_floor_plan_permits_only_imports_that_are_made() -> None:
    """Every import ALLOWED permits is made by some module: a permission nothing uses
    would let a package slide down the floors unnoticed."""
    real = real_imports()
    unused = {name: sorted(allowed - real[name]) for name, allowed in ALLOWED.items()}
    assert {name: extra for name, extra in unused.items() if extra} == {}


def test_each_face_lists_what_its_package_imports() -> None:
    """The packages a face's docstring says it may import are the ones its modules do
    import, no more and no fewer."""
    real = real_imports()
    drift = []
    for face in sorted(p for root in ROOTS.values() for p in root.rglob("__init__.py")):
        name = ".".join(module_name(face))
        if name not in ALLOWED:
            continue
        doc = ast.get_docstring(ast.parse(face.read_text(encoding="utf-8"))) or ""
        said, done = stated_imports(doc), real[name]
        if said != done:
            drift.append(
                f"{face.relative_to(REPO)}: says {sorted(said)} but imports {sorted(done)}"
                f" (unsaid: {sorted(done - said)}, not imported: {sorted(said - done)})"
            )
    assert drift == []


def test_the_stated_list_is_read_from_the_sentence_that_states_it() -> None:
    """A face's list is the ``trimtab.<part>`` and ``pycdp_bridge`` names of its "May
    import" sentence up to a semicolon, not those of the sentences around it."""
    doc = (
        "Built on ``trimtab.wire`` and ``trimtab.tab`` (the tab).\n\n"
        "May import ``trimtab.link``, ``trimtab.tools`` (the catalogue only), Pillow and\n"
        "``pycdp_bridge``; nothing in ``trimtab.cli`` but ``python -m trimtab``. Then\n"
        "``trimtab.sites`` is said elsewhere."
    )
    assert stated_imports(doc) == {"trimtab.link", "trimtab.tools", "pycdp_bridge"}
    assert stated_imports("Imports nothing of the host (``trimtab``).") == frozenset()
    inner = "May import ``trimtab.link.server`` and ``trimtab.wire.host_version``."
    assert stated_imports(inner) == {"trimtab.link.server", "trimtab.wire"}


def test_the_checks_find_a_private_reach_and_a_floor_breach(tmp_path: Path) -> None:
    """The scans report an import of another package's private module and an import
    against the floors, and leave an import through a face alone."""
    tab = ROOTS["trimtab"] / "tab" / "_probe_for_layout_test.py"
    found = Import("x:1", module_name(tab), ("trimtab", "tools", "_input"))
    assert private_reach(found) == "trimtab.tools._input"
    assert private_reach(Import("x:1", module_name(tab), ("trimtab", "tab", "_tab"))) is None
    assert package_of(found.target) == "trimtab.tools"
    assert "trimtab.tools" not in ALLOWED[package_of(found.module)]
    assert private_reach(Import("x:1", module_name(tab), ("trimtab", "pipeline"))) is None
