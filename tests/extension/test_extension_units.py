"""The extension's pure modules under ``node --test`` (extension/tests/), run by ``make test``."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.e2e import EXTENSION_DIR


def test_extension_unit_tests_pass() -> None:
    """Every ``node --test`` unit test of the extension's pure modules passes."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (v20 or newer) is needed to run the extension's unit tests")
    done = subprocess.run(
        [node, "--test", "tests/"],
        cwd=EXTENSION_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout, done.stdout[-2000:]
