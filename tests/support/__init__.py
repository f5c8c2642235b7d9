"""Helpers shared by the test suite (servers, browser process checks)."""

from .http import StaticServer, serve_static
from .processes import browser_processes

__all__ = ["StaticServer", "browser_processes", "serve_static"]
