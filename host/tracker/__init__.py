"""The call tracker: repeated equivalent tool calls answered from a per-session cache.

`CallTracker` keeps each session's recent calls, decides equivalence per tool
(`ToolPolicy.key`, or the generic canonical key of `_cache_keys`), never caches tools with
side effects or error results, and forgets a tab's cached reads when its page
changes (`note_page_change`).

Imports nothing else of the host.
"""

from ._cache_keys import (
    KeyFunction,
    canonical_json,
    canonical_key,
    encoded_size,
    fields_key,
    folded_key,
)
from ._records import (
    SIDE_EFFECTS,
    PageRevision,
    ToolPolicy,
    TrackedResult,
    TrackerLimits,
    TrackerStatistics,
    is_flagged_error,
)
from ._tracker import CallTracker

__all__ = [
    "SIDE_EFFECTS",
    "CallTracker",
    "KeyFunction",
    "PageRevision",
    "ToolPolicy",
    "TrackedResult",
    "TrackerLimits",
    "TrackerStatistics",
    "canonical_json",
    "canonical_key",
    "encoded_size",
    "fields_key",
    "folded_key",
    "is_flagged_error",
]
