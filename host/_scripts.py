"""Page-side JavaScript, read from the ``js/`` folders shipped as package data.

The scripts are real source files (one function each, with a comment saying what it
does) so that they can be read, linted and tested as JavaScript; Python only names
them.
"""

from __future__ import annotations

import functools
import importlib.resources

__all__ = ["page_script"]


@functools.cache
def page_script(package: str, name: str) -> str:
    """The source of ``js/<name>`` in `package` (``trimtab.tools``, ``trimtab.tab``)."""
    return (importlib.resources.files(package) / "js" / name).read_text(encoding="utf-8")
