"""The installer: register the host with the browsers, and what to do next.

`_manifests`: the native-messaging host manifest (the extension id it allows, the
``trimtab-host`` launcher it names) and the folders or registry keys each
Chromium-family browser reads it from; `_next_steps`: what ``trimtab install``
tells a person to do after it (load the extension, share a tab, add the MCP client).

Used by ``trimtab install`` / ``doctor`` (``trimtab.cli``) and by the host, which
checks the extension origin it was started for. Imports nothing of Trimtab.
"""

from ._manifests import (
    BROWSERS,
    EXTENSION_DIR,
    HOST_NAME,
    MANIFEST_FILE,
    build_manifest,
    console_script,
    extension_id,
    extension_id_from_key,
    host_launcher,
    install,
    manifest_dirs,
    uninstall,
)
from ._next_steps import next_steps

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
    "next_steps",
    "uninstall",
]
