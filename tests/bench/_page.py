"""The measurements page, ``tests/bench/README.md``: one marked block per bench section.

Each section's block sits between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
and holds that section's SUMMARY lines from its latest full run; ``make bench``
replaces the blocks of the sections it ran and leaves the prose around them alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "PAGE",
    "block_markers",
    "local_paths_named",
    "render_block",
    "replace_block",
    "write_block",
]

#: The measurements page.
PAGE = Path(__file__).resolve().with_name("README.md")

_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def block_markers(name: str) -> tuple[str, str]:
    """The opening and closing markers of the block called ``name``."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"bench block name {name!r} is not lowercase letters, digits, - or _")
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block ``name`` holding ``body`` and nothing else.

    The text outside the block is kept byte for byte. A block the text does not hold
    yet is added at its end, after one blank line. A block opened twice, never
    closed, closed before it is opened, or closed without an opening is an error
    naming the block, since replacing it would lose text someone wrote.
    """
    opening, closing = block_markers(name)
    opens, closes = text.count(opening), text.count(closing)
    inner = body.strip("\n") + "\n"
    if opens == 0 and closes == 0:
        # One blank line between the text and the new block.
        block = f"{opening}\n{inner}{closing}\n"
        kept = text.rstrip("\n")
        return f"{kept}\n\n{block}" if kept else block
    if opens != 1 or closes != 1:
        raise ValueError(
            f"bench block {name!r} is opened {opens} and closed {closes} times; expected once each"
        )
    start = text.index(opening) + len(opening)
    end = text.index(closing)
    if end < start:
        raise ValueError(f"bench block {name!r} is closed before it is opened")
    return f"{text[:start]}\n{inner}{text[end:]}"


def local_paths_named(text: str, names: Mapping[Path, str]) -> str:
    """``text`` with each of this machine's folders in ``names`` (as a path or a
    ``file://`` URL) written as its name, so that no absolute path reaches the page.

    The longest folder goes first, so a folder inside another keeps its own name.
    """
    for folder in sorted(names, key=lambda path: len(str(path)), reverse=True):
        if not folder.is_absolute():
            raise ValueError(f"folder {str(folder)!r} to be named is not an absolute path")
        name = names[folder]
        text = text.replace(folder.as_uri(), name).replace(str(folder), name)
    return text


def render_block(section: str, lines: Sequence[str], when: str) -> str:
    """A block's body: how to run the section again, when it ran, and its SUMMARY lines."""
    summary = "\n".join(line.rstrip() for line in lines)
    return f"`python -m tests.bench --only {section}`, last run {when}:\n\n```text\n{summary}\n```"


def write_block(section: str, lines: Sequence[str], when: str, page: Path = PAGE) -> None:
    """Replace the section's block of the measurements page with its latest lines."""
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    page.write_text(
        replace_block(text, section, render_block(section, lines, when)), encoding="utf-8"
    )
