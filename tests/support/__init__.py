"""Helpers shared by the test suite (servers, browser process checks, fixture paths)."""

from pathlib import Path

from .http import StaticServer, serve_static
from .processes import LAUNCHED_PROFILES, browser_processes

#: Fixture pages written for the tests (never corpus copies).
TEST_PAGES = Path(__file__).resolve().parents[1] / "pages"

__all__ = ["LAUNCHED_PROFILES", "TEST_PAGES", "StaticServer", "browser_processes", "serve_static"]
