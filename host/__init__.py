"""Trimtab's host: two doors on one wire, the envelope, the tabs, the tools, the pipeline.

The folder is ``host/``, the native-messaging host beside ``extension/`` (the tree is in
README.md, "How it works"); the package imports as ``trimtab``.
Its parts, from the doors down to the page, the way a call flows:

* `trimtab.wire`: framed JSON requests, the request loop, the log file;
* `trimtab.native`: the door Chrome starts (the extension's requests; ``trimtab-host``);
* `trimtab.link`: the door outside agents reach (a per-user socket and a secret);
* `trimtab.browser`: the tabs the host holds and `call_tool`, which both doors call;
* `trimtab.envelope`: what the agent may do, and the one place that asks the person;
* `trimtab.tools`: the agent's tools and their page-side scripts;
* `trimtab.tab`: one tab as the agent sees it (snapshots, diffs, page revisions, settle);
* `trimtab.tracker`: repeated tool calls answered from cache;
* `trimtab.pipeline`: a captured page in, compact XML out.

`trimtab.mcp` (``trimtab mcp``) and `trimtab.cli` (the ``trimtab`` command) are
clients of the link on top, with the installer (`trimtab.install`) beside
the command line. CDP and the page model are in `pycdp_bridge`.

Imports nothing. Each part is imported through its own face (``from trimtab.tab
import SnapshotMemory``), so a command loads only the parts it needs: ``trimtab call``
needs the link and the catalogue, not the pipeline.
"""
