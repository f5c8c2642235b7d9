"""The driver's page-side scripts: the files of ``driver/js/``, with the helpers they
ask for (`trimtab.tab.page_script` reads both)."""

from __future__ import annotations

from ..tab import page_script

__all__ = ["script"]


def script(name: str) -> str:
    """A page-side function or expression of ``driver/js/``, for `call_on` or `evaluate`."""
    return page_script("trimtab.driver", name)
