"""Page-side JavaScript, read from the ``js/`` folders shipped as package data.

The scripts are real source files (one function or expression each, with a comment
saying what it does) so that they can be read, linted and tested as JavaScript; Python
only names them. Helpers several scripts use live once, in this package's
``js/helpers.js``: a script whose first line is ``// needs: focus, text`` gets those
helper sections in a closure around it, the way Playwright's injected scripts share
their utilities, with no build step.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from typing import Final

__all__ = ["applied", "page_script"]

_HELPERS: Final = "helpers.js"
_NEEDS: Final = re.compile(r"//\s*needs:(?P<names>.*)")
_SECTION: Final = re.compile(r"^//\s*helper:\s*(?P<name>[\w-]+)\s*$", re.MULTILINE)


@functools.cache
def page_script(package: str, name: str) -> str:
    """The source of ``js/<name>`` in `package` (``trimtab.driver``, ``trimtab.tools``,
    ``trimtab.tab``), with the helpers its first line asks for.

    A script that needs helpers comes back as one expression whose value is the
    script's own (a function for ``Runtime.callFunctionOn``, or its result for
    ``Runtime.evaluate``); the helpers are in its closure, not globals of the page.
    """
    source = _read(package, name)
    first, _, rest = source.partition("\n")
    needs = _NEEDS.fullmatch(first.strip())
    if needs is None:
        return source
    wanted = [word.strip() for word in needs["names"].split(",") if word.strip()]
    helpers = _helper_sections()
    unknown = [word for word in wanted if word not in helpers]
    if unknown or not wanted:
        raise ValueError(
            f"js/{name} of {package} needs {needs['names'].strip()!r}: "
            f"{', '.join(unknown) or 'nothing'} is not a helper of {_HELPERS} "
            f"(it has {', '.join(helpers)})"
        )
    prelude = "".join(helpers[helper] for helper in helpers if helper in wanted)
    # `return (` on one line: a comment or a newline after `return` would end it.
    return f"(() => {{\n{prelude}return (\n{rest.strip()}\n);\n}})()"


@functools.cache
def _helper_sections() -> dict[str, str]:
    """Each ``// helper: <name>`` section of the helper file, in the file's order."""
    source = _read("trimtab.tab", _HELPERS)
    starts = list(_SECTION.finditer(source))
    sections: dict[str, str] = {}
    for start, end in zip(starts, [*starts[1:], None], strict=True):
        if start["name"] in sections:
            raise ValueError(f"{_HELPERS} has two helpers named {start['name']!r}")
        body = source[start.end() : end.start() if end is not None else len(source)]
        sections[start["name"]] = body.strip("\n") + "\n\n"
    return sections


def applied(function_source: str, *args: object) -> str:
    """An expression that calls the page-side function `function_source` on the JSON
    values `args`, for `evaluate` or a script run in each new document."""
    return f"({function_source})({', '.join(json.dumps(arg) for arg in args)})"


def _read(package: str, name: str) -> str:
    return (importlib.resources.files(package) / "js" / name).read_text(encoding="utf-8")
