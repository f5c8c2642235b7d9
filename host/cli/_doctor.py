"""``trimtab doctor``: check every link from Python to an MCP handshake, in order.

Each check says what it found; the first one that fails is named with how to fix
it. ``--json`` prints the same for scripts; the exit code is 0 when all pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from .. import install as installer
from ..link import LinkError, choose_endpoint, connect, endpoint_dir, read_secret, secret_path
from ..link._paths import PermissionProblem, list_endpoints

__all__ = ["Check", "add_doctor", "run_doctor"]

# Executables of the Chromium-family browsers the installer registers the host for.
_BROWSER_COMMANDS: Final = {
    "chrome": ("google-chrome", "google-chrome-stable"),
    "chromium": ("chromium", "chromium-browser"),
    "edge": ("microsoft-edge", "microsoft-edge-stable"),
    "brave": ("brave-browser", "brave"),
    "vivaldi": ("vivaldi", "vivaldi-stable"),
}
_MCP_TIMEOUT: Final = 30.0


@attrs.frozen
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


def add_doctor(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check the set-up for agents outside the browser",
        description="Check Python, browsers, host manifests, the running host, the "
        "endpoint and its permissions, and an MCP handshake; name the first broken link.",
    )
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.add_argument("--browser", help="which running browser to check the link with")
    doctor.add_argument("--user-data-dir", help="also check the manifest of this profile folder")


def run_doctor(args: argparse.Namespace) -> int:
    checks = trio.run(_all_checks, args)
    broken = next((check for check in checks if not check.ok), None)
    if args.json:
        report = {
            "ok": broken is None,
            "checks": [check.to_json() for check in checks],
            "first_broken": None if broken is None else broken.name,
        }
        print(json.dumps(report, indent=1))
    else:
        for check in checks:
            print(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
        if broken is None:
            print("every check passed")
        else:
            print(f"first broken link: {broken.name}; fix: {broken.fix}")
    return 0 if broken is None else 1


async def _all_checks(args: argparse.Namespace) -> list[Check]:
    checks = [_python(), _browsers(), *_manifests(args.user_data_dir)]
    host = _host(args.browser)
    checks.append(host)
    checks.append(_permissions())
    if host.ok:
        checks.append(await _link(args.browser))
        checks.append(await _mcp(args.browser))
    return checks


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    venv = sys.prefix != sys.base_prefix
    ok = sys.version_info >= (3, 11)
    where = f"a virtual environment at {sys.prefix}" if venv else f"no venv ({sys.prefix})"
    return Check("python", ok, f"Python {version} in {where}", "install Python 3.11 or later")


def _browsers() -> Check:
    found = []
    configured = os.environ.get("TRIMTAB_CHROME")
    if configured and os.access(configured, os.X_OK):
        found.append(f"TRIMTAB_CHROME={configured}")
    for browser, names in _BROWSER_COMMANDS.items():
        for name in names:
            path = shutil.which(name)
            if path:
                found.append(f"{browser} ({path})")
                break
    return Check(
        "browsers",
        bool(found),
        ", ".join(found) or "no Chromium-family browser on PATH",
        "install Chrome, Chromium, Edge, Brave or Vivaldi",
    )


def _manifests(user_data_dir: str | None) -> list[Check]:
    """One check per manifest found; a failing check when there is none at all."""
    if sys.platform == "win32":
        return [Check("manifest", True, "Windows: registered in the registry (not checked)")]
    places: list[tuple[str, Path]] = [
        (browser, folder / installer.MANIFEST_FILE)
        for browser, folder in zip(installer.BROWSERS, installer.manifest_dirs(), strict=True)
    ]
    if user_data_dir:
        folder = Path(user_data_dir).expanduser().resolve() / "NativeMessagingHosts"
        places.insert(0, ("profile", folder / installer.MANIFEST_FILE))
    origin = f"chrome-extension://{installer.extension_id()}/"
    checks = [_manifest(name, path, origin) for name, path in places if path.exists()]
    if user_data_dir and not places[0][1].exists():
        checks.insert(0, _missing_manifest(f"manifest ({places[0][0]})", places[0][1]))
    if not checks:
        checks.append(_missing_manifest("manifest", places[0][1]))
    return checks


def _missing_manifest(name: str, path: Path) -> Check:
    return Check(
        name,
        False,
        f"no host manifest at {path} (nor for any other browser)",
        "run `trimtab install` (or `make install`) and restart the browser",
    )


def _manifest(browser: str, path: Path, origin: str) -> Check:
    name = f"manifest ({browser})"
    fix = "run `trimtab install` again from this environment"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        host = Path(str(data["path"]))
        origins = list(data["allowed_origins"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Check(name, False, f"{path} is not a host manifest: {exc}", fix)
    if not (host.is_file() and os.access(host, os.X_OK)):
        return Check(name, False, f"{path} names a host that is not an executable: {host}", fix)
    if origin not in origins:
        return Check(name, False, f"{path} allows {origins}, not the extension {origin}", fix)
    return Check(name, True, f"{path} → {host}, allows {origin}")


def _host(browser: str | None) -> Check:
    folder = endpoint_dir()
    endpoints = list_endpoints(folder)
    alive = [endpoint for endpoint in endpoints if endpoint.alive]
    fix = (
        "open the browser with the Trimtab extension loaded (chrome://extensions); it "
        "starts the host when it loads. See the host's log if it still does not appear"
    )
    if not alive:
        return Check("host", False, f"no running host has an endpoint in {folder}", fix)
    try:
        chosen = choose_endpoint(browser, folder)
    except LinkError as exc:
        return Check("host", False, exc.message, "pass --browser with one of the names")
    return Check(
        "host",
        True,
        f"{chosen.name}: {chosen.info.browser} (profile {chosen.info.profile}), host pid "
        f"{chosen.info.pid}, {len(alive)} running",
    )


def _permissions() -> Check:
    folder = endpoint_dir()
    problems = []
    items: list[tuple[Path, int]] = [(secret_path(), 0o600)]
    if folder.is_dir():
        mode = stat.S_IMODE(folder.lstat().st_mode)
        if mode != 0o700:
            problems.append(f"{folder} is {mode:04o}, not 0700")
        items += [(endpoint.socket, 0o600) for endpoint in list_endpoints(folder)]
    for path, wanted in items:
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if mode & ~wanted:
            problems.append(f"{path} is {mode:04o}, not {wanted:04o}")
    return Check(
        "permissions",
        not problems,
        "; ".join(problems) or f"{folder} 0700, sockets and secret 0600",
        "remove the files named (the host makes them again, private, when it starts)",
    )


async def _link(browser: str | None) -> Check:
    try:
        endpoint = choose_endpoint(browser)
        secret = read_secret()
        with trio.fail_after(10):
            async with connect(endpoint.socket, secret, {"name": "trimtab-doctor"}) as link:
                pong = await link.request("ping")
                tabs = (await link.request("tabs"))["tabs"]
    except (LinkError, OSError, PermissionProblem, trio.TooSlowError) as exc:
        return Check(
            "link",
            False,
            f"the endpoint did not answer: {exc}",
            "restart the browser; if that does not help, see the host's log",
        )
    return Check(
        "link", True, f"host {pong.get('version')} answers; {len(tabs)} tab(s) shared with agents"
    )


async def _mcp(browser: str | None) -> Check:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = [sys.executable, "-m", "trimtab", "mcp"]
    if browser:
        command += ["--browser", browser]
    names: list[str] = []
    try:
        with trio.fail_after(_MCP_TIMEOUT):
            async with Client(
                StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
            ) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool("tabs", {})
    except Exception as exc:  # any failure of the handshake is the finding
        return Check(
            "mcp",
            False,
            f"`{' '.join(command)}` failed: {exc!r:.300}",
            "run `trimtab mcp` by hand to see its error",
        )
    if result.is_error:
        return Check(
            "mcp",
            False,
            f"the tabs tool failed: {result.content!r:.300}",
            "run `trimtab tabs` to see the error",
        )
    return Check("mcp", True, f"`{' '.join(command)}` answers with {len(names)} tools")
