"""The host installer: manifest content, where it goes, and that Chromium finds it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e import EXTENSION_DIR, launch_with_extension
from trimtab.install import (
    BROWSERS,
    HOST_NAME,
    build_manifest,
    console_script,
    extension_id,
    extension_id_from_key,
    host_launcher,
    install,
    manifest_dirs,
    uninstall,
)

FAKE_HOST = Path("/opt/trimtab/bin/trimtab-host")


def test_extension_id_matches_the_manifest_key() -> None:
    """The id in manifest/ is the one Chrome derives from the extension's public key."""
    key = json.loads((EXTENSION_DIR / "manifest.json").read_text())["key"]
    assert extension_id_from_key(key) == extension_id()


def test_extension_id_from_key_rejects_bad_base64() -> None:
    """A key that is not base64 is reported with the value, not as a bare decode error."""
    with pytest.raises(ValueError, match="not valid base64"):
        extension_id_from_key("not base64!")


def test_manifest_content(tmp_path: Path) -> None:
    """The written manifest names the host, its launcher, stdio, and only our extension."""
    [written] = install(user_data_dir=tmp_path, host_path=FAKE_HOST)
    assert written == tmp_path.resolve() / "NativeMessagingHosts" / f"{HOST_NAME}.json"
    data = json.loads(written.read_text())
    assert data["name"] == HOST_NAME
    assert data["path"] == str(FAKE_HOST)
    assert data["type"] == "stdio"
    assert data["allowed_origins"] == [f"chrome-extension://{extension_id()}/"]
    assert data["description"]


def test_build_manifest_needs_an_absolute_path() -> None:
    """Chrome resolves only absolute host paths on Linux and macOS, so a relative one fails."""
    with pytest.raises(ValueError, match="absolute"):
        build_manifest(Path("bin/trimtab-host"))


def test_default_launcher_is_this_environments_trimtab_host(tmp_path: Path) -> None:
    """Without host_path the manifest points at the trimtab-host script of this venv."""
    [written] = install(user_data_dir=tmp_path)
    path = Path(json.loads(written.read_text())["path"])
    assert path == host_launcher()
    assert path.is_absolute()
    assert path.name == "trimtab-host"


def test_install_is_idempotent(tmp_path: Path) -> None:
    """Installing twice leaves one identical manifest and no temporary files."""
    first = install(user_data_dir=tmp_path, host_path=FAKE_HOST)
    content = first[0].read_text()
    second = install(user_data_dir=tmp_path, host_path=FAKE_HOST)
    assert first == second
    assert second[0].read_text() == content
    assert sorted(p.name for p in first[0].parent.iterdir()) == [f"{HOST_NAME}.json"]


def test_install_ends_with_the_next_steps(tmp_path: Path) -> None:
    """`trimtab install` registers the host (on stderr), then prints the next steps: the
    extension folder to load unpacked, how to share a tab, and this environment's
    `trimtab mcp` as the line for an MCP client, all of which exist."""
    done = subprocess.run(
        [sys.executable, "-m", "trimtab", "install", "--user-data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    manifest = tmp_path.resolve() / "NativeMessagingHosts" / f"{HOST_NAME}.json"
    assert done.stderr == f"registered {HOST_NAME} in {manifest}\n"
    steps = done.stdout
    assert steps.startswith("Next steps:\n1. Load the extension: open chrome://extensions")
    assert f"Load unpacked and choose {EXTENSION_DIR}\n" in steps
    assert (EXTENSION_DIR / "manifest.json").is_file()
    assert '"Share this tab with agents"' in steps
    command = console_script("trimtab")
    assert command.is_file()
    assert f"claude mcp add trimtab -- {shlex.quote(str(command))} mcp\n" in steps
    [config] = [line.strip() for line in steps.splitlines() if '"mcpServers"' in line]
    assert json.loads(config) == {
        "mcpServers": {"trimtab": {"command": str(command), "args": ["mcp"]}}
    }
    assert f"{shlex.quote(str(command))} doctor" in steps


def test_uninstall_removes_the_manifest(tmp_path: Path) -> None:
    """Uninstall deletes what install wrote, and a second uninstall removes nothing."""
    written = install(user_data_dir=tmp_path, host_path=FAKE_HOST)
    assert uninstall(user_data_dir=tmp_path) == written
    assert not written[0].exists()
    assert written[0].parent.is_dir()  # other hosts may live there
    assert uninstall(user_data_dir=tmp_path) == []


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (
            "linux",
            {
                "chrome": ".config/google-chrome",
                "chromium": ".config/chromium",
                "edge": ".config/microsoft-edge",
                "brave": ".config/BraveSoftware/Brave-Browser",
                "vivaldi": ".config/vivaldi",
            },
        ),
        (
            "darwin",
            {
                "chrome": "Library/Application Support/Google/Chrome",
                "chromium": "Library/Application Support/Chromium",
                "edge": "Library/Application Support/Microsoft Edge",
                "brave": "Library/Application Support/BraveSoftware/Brave-Browser",
                "vivaldi": "Library/Application Support/Vivaldi",
            },
        ),
    ],
)
def test_per_browser_folders(tmp_path: Path, platform: str, expected: dict[str, str]) -> None:
    """Each browser's manifest goes to its per-user NativeMessagingHosts folder, made if missing."""
    written = install(host_path=FAKE_HOST, platform=platform, home=tmp_path)
    assert written == [
        tmp_path / expected[b] / "NativeMessagingHosts" / f"{HOST_NAME}.json" for b in BROWSERS
    ]
    assert all(json.loads(p.read_text())["path"] == str(FAKE_HOST) for p in written)
    assert uninstall(platform=platform, home=tmp_path) == written


def test_one_browser_only(tmp_path: Path) -> None:
    """--browser registers for that browser alone, matched case-insensitively."""
    written = install("Brave", host_path=FAKE_HOST, platform="linux", home=tmp_path)
    [folder] = manifest_dirs("brave", platform="linux", home=tmp_path)
    assert folder == tmp_path / ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts"
    assert written == [folder / f"{HOST_NAME}.json"]
    assert not (tmp_path / ".config/google-chrome").exists()


def test_unknown_browser_is_named_in_the_error(tmp_path: Path) -> None:
    """An unsupported browser name is rejected with that name in the message."""
    with pytest.raises(ValueError, match="'netscape'"):
        install("netscape", host_path=FAKE_HOST, platform="linux", home=tmp_path)


def test_windows_refuses_user_data_dir(tmp_path: Path) -> None:
    """On Windows a user-data-dir registration would be ignored by Chrome, so it is refused."""
    with pytest.raises(ValueError, match="registry"):
        install(user_data_dir=tmp_path, host_path=FAKE_HOST, platform="win32")


@pytest.mark.browser
async def test_chromium_finds_the_installed_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extension's connectNative reaches the host registered in the profile; ping answers."""
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))  # Chrome passes it to the host
    async with launch_with_extension(tmp_path / "profile") as ext:
        reply = await ext.worker.evaluate("trimtab.host.request({type: 'ping'})")
        status = await ext.worker.evaluate("trimtab.host.status()")
    assert reply["pong"] is True
    assert isinstance(reply["version"], str)
    assert reply["version"]
    assert status["connected"] is True
