"""The page-side scripts: real ``.js`` files, their shared helpers, and no JavaScript
left inside Python strings."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pycdp_bridge import PageTarget, call_on, evaluate
from tests.support.pages import page_url
from trimtab.tab import page_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT_FOLDERS = {
    "trimtab.tab": REPO / "host" / "tab" / "js",
    "trimtab.driver": REPO / "host" / "driver" / "js",
    "trimtab.tools": REPO / "host" / "tools" / "js",
}
HELPERS = REPO / "host" / "tab" / "js" / "helpers.js"
# The loader writes the one piece of JavaScript Python may: the closure that puts a
# script's helpers around it.
LOADER = REPO / "host" / "tab" / "_scripts.py"
# A file name of a page script, as Python code names one.
SCRIPT_NAME = re.compile(r"[a-z][a-z0-9-]*\.js")
# What a JavaScript function looks like inside a string: `function (`, `function name(`,
# `(a, b) => ...`, `x => ...`.
JS_FUNCTION = re.compile(r"\bfunction\s*[\w$]*\s*\(|(\)|\b[\w$]+)\s*=>")
# Calls whose argument is JavaScript: pycdp_bridge's helpers and a page's `evaluate`.
JS_CALLS = frozenset({"evaluate", "call_on"})


def page_scripts() -> list[tuple[str, str]]:
    """(package, file name) of every page script of the host, helpers.js aside."""
    return [
        (package, path.name)
        for package, folder in SCRIPT_FOLDERS.items()
        for path in sorted(folder.glob("*.js"))
        if path != HELPERS
    ]


def test_every_assembled_script_parses_as_javascript() -> None:
    """Each page script, with the helpers its first line asks for put around it, is
    valid JavaScript where CDP puts it: inside parentheses, as one expression."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (v20 or newer) is needed to parse the page scripts")
    sources = {f"{package}/{name}": page_script(package, name) for package, name in page_scripts()}
    checker = (
        "const vm = require('vm');"
        "const sources = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const bad = [];"
        "for (const [name, source] of Object.entries(sources)) {"
        "  try { new vm.Script('(' + source + '\\n)', {filename: name}); }"
        "  catch (e) { bad.push(name + ': ' + e.message); }"
        "}"
        "process.stdout.write(JSON.stringify(bad));"
    )
    run = subprocess.run(
        [node, "-e", checker],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(run.stdout) == [], "page scripts that do not parse:\n" + run.stdout
    assert len(sources) > 20


def test_a_script_gets_only_the_helpers_it_needs() -> None:
    """A script without a `// needs:` line is its file as written; one that needs
    helpers gets those sections (and no other) in a closure around it."""
    plain = (SCRIPT_FOLDERS["trimtab.driver"] / "caret-end.js").read_text(encoding="utf-8")
    assert page_script("trimtab.driver", "caret-end.js") == plain
    contains = page_script("trimtab.driver", "contains-hit.js")
    assert contains.startswith("(() => {\n")
    assert "function isComposedWithin(" in contains
    assert "function deepActiveElement(" not in contains
    assert "needs:" not in contains
    focus = page_script("trimtab.driver", "focus-owner.js")
    # Helpers come in the helper file's order, whatever order the script names them in.
    assert focus.index("function composedParent(") < focus.index("function deepActiveElement(")
    assert focus.index("function deepActiveElement(") < focus.index("function squeeze(")


def test_every_helper_is_needed_by_a_script() -> None:
    """Each section of helpers.js is asked for by at least one page script: a helper
    no script uses is dead code."""
    helpers = re.findall(r"^// helper: (\S+)$", HELPERS.read_text(encoding="utf-8"), re.MULTILINE)
    needed = {
        word.strip()
        for package, name in page_scripts()
        for first in [(SCRIPT_FOLDERS[package] / name).read_text(encoding="utf-8").split("\n")[0]]
        if first.startswith("// needs:")
        for word in first.removeprefix("// needs:").split(",")
    }
    assert len(helpers) >= 4
    assert set(helpers) == needed


def test_a_script_that_needs_an_unknown_helper_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a script that asks for a helper helpers.js lacks raises an error naming
    the helper and the script."""
    package = tmp_path / "scripts_needing_nothing_known"
    (package / "js").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "js" / "lost.js").write_text(
        "// needs: focus, telepathy\nfunction() { return 1; }\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ValueError, match=r"lost\.js.*telepathy is not a helper"):
            page_script(package.name, "lost.js")
    finally:
        sys.modules.pop(package.name, None)


def _python_files() -> list[Path]:
    return sorted(
        path for folder in ("host", "pycdp_bridge") for path in (REPO / folder).rglob("*.py")
    )


def _string_constants(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module, its docstrings aside."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def inline_javascript(path: Path, root: Path = REPO) -> list[str]:
    """``file:line: text`` for each string literal of a Python module that holds a
    JavaScript function, and each literal (or f-string) given as the source to
    `evaluate` or `call_on`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [
        f"{path.relative_to(root)}:{node.lineno}: {node.value[:60]!r}"
        for node in _string_constants(tree)
        if JS_FUNCTION.search(node.value)
    ]
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in JS_CALLS:
            continue
        # evaluate(target, source) and call_on(target, object, source); page.evaluate(source).
        position = {"evaluate": 0 if isinstance(func, ast.Attribute) else 1, "call_on": 2}[name]
        if len(call.args) > position and isinstance(
            call.args[position], ast.Constant | ast.JoinedStr
        ):
            found.append(
                f"{path.relative_to(root)}:{call.lineno}: {ast.unparse(call.args[position])[:60]}"
            )
    return sorted(set(found))


def test_the_check_finds_inline_javascript(tmp_path: Path) -> None:
    """The scan reports functions inside strings and literal sources handed to
    `evaluate` or `call_on`, and leaves docstrings and named scripts alone."""
    module = tmp_path / "sample.py"
    module.write_text(
        '"""A module whose docstring may say function() { return 1; } freely."""\n'
        "QUIET = 'function(a) { return a; }'\n"
        "ARROW = '(() => document.title)()'\n"
        "async def f(target, page, oid):\n"
        "    await evaluate(target, '[scrollX, scrollY]')\n"
        "    await page.evaluate('document.title')\n"
        "    await call_on(target, oid, f'{SOURCE}')\n"
        "    await evaluate(target, script('scroll-offset.js'))\n"
        "    await call_on(target, oid, script('is-connected.js'), 'plain argument')\n",
        encoding="utf-8",
    )
    found = [line.split(":")[1] for line in inline_javascript(module, tmp_path)]
    assert found == ["2", "3", "5", "6", "7"]


@pytest.mark.parametrize("folder", ["host", "pycdp_bridge"])
def test_no_javascript_is_written_inside_python(folder: str) -> None:
    """No Python module of the host or the bridge holds page JavaScript: every snippet
    is a ``js/`` file, read by name."""
    found = [
        line
        for path in _python_files()
        if path.is_relative_to(REPO / folder) and path != LOADER
        for line in inline_javascript(path)
    ]
    assert not found, "JavaScript inside Python (make it a js/ file):\n" + "\n".join(found)


def test_every_script_named_in_python_is_a_file_and_every_file_is_used() -> None:
    """The script names the host's Python code loads are exactly the files of the
    ``js/`` folders: none missing, none left over."""
    named = {
        node.value
        for path in _python_files()
        for node in _string_constants(ast.parse(path.read_text(encoding="utf-8")))
        if SCRIPT_NAME.fullmatch(node.value)
    }
    files = {name for _, name in page_scripts()} | {HELPERS.name}
    assert named - files == set(), "scripts named but missing"
    assert files - named == set(), "script files no Python code loads"


_FOCUS_PAGE = (
    "<!doctype html><title>Focus</title>"
    "<input id='outer' aria-label='Outer field'>"
    "<div id='host'></div>"
    "<iframe id='frame' srcdoc=\"<form><input id='inner' type='search'></form>\"></iframe>"
    "<script>"
    "const root = document.getElementById('host').attachShadow({mode: 'open'});"
    'root.innerHTML = \'<input id="shadowed" placeholder="In the shadow">\';'
    "</script>"
)


async def _element(page: PageTarget, expression: str) -> str:
    remote = await evaluate(page, expression, return_by_value=False)
    return str(remote["objectId"])


async def _focused_id(page: PageTarget) -> str:
    focused = await evaluate(
        page, page_script("trimtab.driver", "focused-element.js"), return_by_value=False
    )
    return str(await call_on(page, focused["objectId"], "function() { return this.id; }"))


@pytest.mark.browser
async def test_the_focus_helpers_walk_shadow_roots_and_frames(page: PageTarget) -> None:
    """The shared focus helpers find the focus inside an open shadow root and inside a
    same-origin frame, in every script that uses them, in a real Chromium."""
    await page.navigate(page_url(_FOCUS_PAGE))
    outer = await _element(page, "document.getElementById('outer')")
    host = await _element(page, "document.getElementById('host')")
    frame = await _element(page, "document.getElementById('frame')")

    await evaluate(page, "document.getElementById('host').shadowRoot.firstChild.focus()")
    assert await _focused_id(page) == "shadowed"
    assert await call_on(page, host, page_script("trimtab.driver", "is-focused.js")) is True
    assert await call_on(page, outer, page_script("trimtab.driver", "is-focused.js")) is False
    owner = await call_on(page, outer, page_script("trimtab.driver", "focus-owner.js"))
    assert owner == '<input> "In the shadow"'
    assert await call_on(page, host, page_script("trimtab.driver", "focus-owner.js")) is None
    assert await evaluate(page, page_script("trimtab.driver", "focused-enter-submits.js")) is False

    await evaluate(page, "document.getElementById('frame').contentDocument.forms[0][0].focus()")
    assert await _focused_id(page) == "inner"
    # The frame element holds the focus for the walk that stays in one document.
    assert await call_on(page, frame, page_script("trimtab.driver", "is-focused.js")) is True
    assert await evaluate(page, page_script("trimtab.driver", "focused-enter-submits.js")) is True


@pytest.mark.browser
async def test_element_info_reads_an_element_whose_value_is_a_number(page: PageTarget) -> None:
    """A ``<progress>`` has a number for its value and no text: the shared text helper
    folds it like any text instead of throwing."""
    await page.navigate(page_url("<!doctype html><progress id='bar' value='0.5'></progress>"))
    bar = await _element(page, "document.getElementById('bar')")
    info = await call_on(page, bar, page_script("trimtab.driver", "element-info.js"))
    assert info["tag"] == "progress"
    assert info["text"] == "0.5"
