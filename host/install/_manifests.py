"""Register the Trimtab host with Chromium-family browsers (``trimtab install``).

Chrome starts a native-messaging host only if it finds a manifest named after the
host: a JSON file in a per-browser ``NativeMessagingHosts`` folder on Linux and
macOS, a registry key pointing at that file on Windows. The template and the
extension id it allows live in ``manifest/`` at the repository root.

We do not use the ``nativemessaging`` package's installer: it covers only Chrome
and Firefox, blocks on ``input()`` and fails when the browser's config folder does
not exist yet (see ``manifest/README.md``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "BROWSERS",
    "EXTENSION_DIR",
    "HOST_NAME",
    "MANIFEST_FILE",
    "build_manifest",
    "console_script",
    "extension_id",
    "extension_id_from_key",
    "host_launcher",
    "install",
    "manifest_dirs",
    "uninstall",
]

HOST_NAME = "com.trimtab.host"
MANIFEST_FILE = f"{HOST_NAME}.json"

# The repository root holds manifest/ and extension/ next to host/ (this package's parent).
_REPO = Path(__file__).resolve().parents[2]
TEMPLATE = _REPO / "manifest" / MANIFEST_FILE
EXTENSION_DIR = _REPO / "extension"
PATH_PLACEHOLDER = "{{HOST_PATH}}"

BROWSERS = ("chrome", "chromium", "edge", "brave", "vivaldi")

# Per-user config folders under the home directory.
_LINUX_DIRS: Mapping[str, str] = {
    "chrome": ".config/google-chrome",
    "chromium": ".config/chromium",
    "edge": ".config/microsoft-edge",
    "brave": ".config/BraveSoftware/Brave-Browser",
    "vivaldi": ".config/vivaldi",
}
_MACOS_DIRS: Mapping[str, str] = {
    "chrome": "Library/Application Support/Google/Chrome",
    "chromium": "Library/Application Support/Chromium",
    "edge": "Library/Application Support/Microsoft Edge",
    "brave": "Library/Application Support/BraveSoftware/Brave-Browser",
    "vivaldi": "Library/Application Support/Vivaldi",
}
# Under HKEY_CURRENT_USER. Brave and Vivaldi on Windows read Chrome's key.
_WINDOWS_KEYS: Mapping[str, str] = {
    "chrome": r"Software\Google\Chrome\NativeMessagingHosts",
    "chromium": r"Software\Chromium\NativeMessagingHosts",
    "edge": r"Software\Microsoft\Edge\NativeMessagingHosts",
    "brave": r"Software\Google\Chrome\NativeMessagingHosts",
    "vivaldi": r"Software\Google\Chrome\NativeMessagingHosts",
}


def extension_id_from_key(key_b64: str) -> str:
    """The id Chrome gives an extension whose manifest ``key`` is ``key_b64``.

    The first 128 bits of the SHA-256 of the public key (DER), one letter a-p per
    hex digit.
    """
    try:
        der = base64.b64decode(key_b64, validate=True)
    except ValueError as exc:
        raise ValueError(f"extension key is not valid base64: {key_b64[:40]!r}...") from exc
    digest = hashlib.sha256(der).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def _template() -> dict[str, Any]:
    try:
        text = TEMPLATE.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"host manifest template {TEMPLATE} is missing; `trimtab install` runs from a "
            "clone of the repository (pip install -e .)"
        ) from None
    data: dict[str, Any] = json.loads(text)
    return data


def extension_id() -> str:
    """The extension id the host manifest allows, read from the template."""
    origins = _template()["allowed_origins"]
    if len(origins) != 1 or not str(origins[0]).startswith("chrome-extension://"):
        raise ValueError(f"the template must allow exactly one extension origin, got {origins!r}")
    return str(origins[0]).removeprefix("chrome-extension://").rstrip("/")


def console_script(name: str, platform: str | None = None) -> Path:
    """Where the console script ``name`` of the environment running this code is
    (it may not exist: the project may not be installed in it)."""
    platform = platform or sys.platform
    scripts = Path(sysconfig.get_path("scripts"))
    return scripts / (f"{name}.exe" if platform == "win32" else name)


def host_launcher(platform: str | None = None) -> Path:
    """The ``trimtab-host`` console script of the environment running this code."""
    launcher = console_script("trimtab-host", platform)
    if not launcher.exists():
        raise FileNotFoundError(
            f"the host launcher {launcher} does not exist; install the project into this "
            "environment first (pip install -e .)"
        )
    return launcher


def build_manifest(host_path: Path) -> dict[str, Any]:
    """The host manifest with ``path`` set to ``host_path`` (which must be absolute)."""
    if not host_path.is_absolute():
        raise ValueError(f"Chrome needs an absolute host path on Linux and macOS: {host_path}")
    data = _template()
    if data.get("path") != PATH_PLACEHOLDER:
        raise ValueError(f"template path should be {PATH_PLACEHOLDER!r}, got {data.get('path')!r}")
    data["path"] = str(host_path)
    return data


def _check_browser(browser: str | None) -> tuple[str, ...]:
    if browser is None:
        return BROWSERS
    name = browser.lower()
    if name not in BROWSERS:
        raise ValueError(f"unknown browser {browser!r}; choose one of {', '.join(BROWSERS)}")
    return (name,)


def manifest_dirs(
    browser: str | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
) -> list[Path]:
    """The per-user ``NativeMessagingHosts`` folders for ``browser`` (all when None).

    Linux and macOS only; Windows registers through the registry.
    """
    platform = platform or sys.platform
    home = home or Path.home()
    if platform == "darwin":
        table = _MACOS_DIRS
    elif platform.startswith("linux") or platform.startswith("freebsd"):
        table = _LINUX_DIRS
    else:
        raise ValueError(f"no manifest folders on platform {platform!r}; Windows uses the registry")
    return [home / table[b] / "NativeMessagingHosts" for b in _check_browser(browser)]


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def install(
    browser: str | None = None,
    user_data_dir: Path | None = None,
    *,
    host_path: Path | None = None,
    platform: str | None = None,
    home: Path | None = None,
) -> list[Path]:
    """Register the host for ``browser`` (every supported one when None).

    With ``user_data_dir`` the manifest goes to ``<user_data_dir>/NativeMessagingHosts``
    only (a browser started with ``--user-data-dir`` looks there). Missing folders are
    created; running it again rewrites the same files. Returns the manifest files
    written. ``host_path``, ``platform`` and ``home`` default to this environment's
    launcher, ``sys.platform`` and the home directory.
    """
    platform = platform or sys.platform
    browsers = _check_browser(browser)
    if platform == "win32":
        if user_data_dir is not None:
            raise ValueError(
                "--user-data-dir works on Linux and macOS only: Chrome on Windows finds "
                "native hosts through the registry"
            )
        return _install_windows(browsers, host_path or host_launcher(platform), home)
    text = json.dumps(build_manifest(host_path or host_launcher(platform)), indent=2) + "\n"
    if user_data_dir is not None:
        dirs = [user_data_dir.resolve() / "NativeMessagingHosts"]
    else:
        dirs = manifest_dirs(browser, platform=platform, home=home)
    written = []
    for folder in dirs:
        target = folder / MANIFEST_FILE
        _write_atomic(target, text)
        written.append(target)
    return written


def uninstall(
    browser: str | None = None,
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
) -> list[Path]:
    """Remove what ``install`` wrote for the same arguments; returns the files removed.

    The folders stay: other hosts may live in them.
    """
    platform = platform or sys.platform
    browsers = _check_browser(browser)
    if platform == "win32":
        if user_data_dir is not None:
            raise ValueError("--user-data-dir works on Linux and macOS only")
        return _uninstall_windows(browsers, home)
    if user_data_dir is not None:
        dirs = [user_data_dir.resolve() / "NativeMessagingHosts"]
    else:
        dirs = manifest_dirs(browser, platform=platform, home=home)
    removed = []
    for folder in dirs:
        target = folder / MANIFEST_FILE
        if target.exists():
            target.unlink()
            removed.append(target)
    return removed


def _windows_data_dir(home: Path | None) -> Path:
    base = os.environ.get("LOCALAPPDATA")
    root = Path(base) if base and home is None else (home or Path.home()) / "AppData" / "Local"
    return root / "Trimtab"


def _install_windows(browsers: tuple[str, ...], launcher: Path, home: Path | None) -> list[Path]:
    if sys.platform == "win32":
        import winreg

        data_dir = _windows_data_dir(home)
        # Chrome runs a Windows host through cmd.exe; a .bat keeps the manifest's path
        # valid whatever the console script's extension is.
        wrapper = data_dir / "trimtab-host.bat"
        _write_atomic(wrapper, f'@echo off\r\n"{launcher}" %*\r\n')
        written = []
        for key_path in sorted({_WINDOWS_KEYS[b] for b in browsers}):
            target = data_dir / key_path.split("\\")[1].lower() / MANIFEST_FILE
            _write_atomic(target, json.dumps(build_manifest(wrapper), indent=2) + "\n")
            with winreg.CreateKey(winreg.HKEY_CURRENT_USER, f"{key_path}\\{HOST_NAME}") as key:
                winreg.SetValueEx(key, "", 0, winreg.REG_SZ, str(target))
            written.append(target)
        return written
    raise RuntimeError(f"the registry exists only on Windows, not on {sys.platform}")


def _uninstall_windows(browsers: tuple[str, ...], home: Path | None) -> list[Path]:
    if sys.platform == "win32":
        import winreg

        data_dir = _windows_data_dir(home)
        removed = []
        for key_path in sorted({_WINDOWS_KEYS[b] for b in browsers}):
            with contextlib.suppress(FileNotFoundError):
                winreg.DeleteKey(winreg.HKEY_CURRENT_USER, f"{key_path}\\{HOST_NAME}")
            target = data_dir / key_path.split("\\")[1].lower() / MANIFEST_FILE
            if target.exists():
                target.unlink()
                removed.append(target)
        return removed
    raise RuntimeError(f"the registry exists only on Windows, not on {sys.platform}")
