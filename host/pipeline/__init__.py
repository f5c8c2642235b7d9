"""The compaction pipeline: a captured page in, small lossless XML out.

Stage 1 (`_filter`) decides what a person can see, stages 2 and 3 (`_build`)
simplify and encode it, `_eids` gives controls stable ids, `_compact` renders
regions and XML with the stats of every run, and `token_breakdown` says where an
XML's tokens go (text, ids, tags, attributes, wrappers, whitespace). `xml` is the one
place that escapes page text and writes tags; everything the host writes as XML goes
through it. `credentials`
is the one rule of which names and values are credentials and how they are hidden,
for every place beside the page's visible text that shows page data to the model.

May import ``pycdp_bridge`` (the page model) and ``trimtab.sites``; nothing else of
the host.
"""

from . import _credentials as credentials
from . import _xml as xml
from ._breakdown import PARTS, TokenBreakdown, token_breakdown
from ._build import BuildOptions
from ._compact import (
    LONG_TEXT,
    NOTED_RUN,
    TEXT_MARKER,
    Compaction,
    CompactionStats,
    Item,
    Prepared,
    Region,
    compact,
    lines_shown,
    open_tag,
    prepare,
    read_text,
    render_items,
    render_node,
    text_key,
)
from ._render import LISTS
from ._secrets import Secret, mask, secret_kind
from ._tokens import TokenMemo, count_tokens, least_tokens, load_in_background
from ._tree import Control, OutNode

__all__ = [
    "LISTS",
    "LONG_TEXT",
    "NOTED_RUN",
    "PARTS",
    "TEXT_MARKER",
    "BuildOptions",
    "Compaction",
    "CompactionStats",
    "Control",
    "Item",
    "OutNode",
    "Prepared",
    "Region",
    "Secret",
    "TokenBreakdown",
    "TokenMemo",
    "compact",
    "count_tokens",
    "credentials",
    "least_tokens",
    "lines_shown",
    "load_in_background",
    "mask",
    "open_tag",
    "prepare",
    "read_text",
    "render_items",
    "render_node",
    "secret_kind",
    "text_key",
    "token_breakdown",
    "xml",
]
