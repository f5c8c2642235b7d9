"""The names of the CDP events Trimtab listens to, in one place (``protocol.events``).

Pass them to `Target.listen` and compare them with `Event.method`; commands are named
only by the generators of `pycdp_bridge.protocol`.
"""

from __future__ import annotations

from typing import Final

# --- Target, Inspector ----------------------------------------------------------------
TARGET_ATTACHED_TO_TARGET: Final = "Target.attachedToTarget"
TARGET_DETACHED_FROM_TARGET: Final = "Target.detachedFromTarget"
INSPECTOR_TARGET_CRASHED: Final = "Inspector.targetCrashed"
INSPECTOR_TARGET_RELOADED_AFTER_CRASH: Final = "Inspector.targetReloadedAfterCrash"

# --- Page -----------------------------------------------------------------------------
PAGE_DOM_CONTENT_EVENT_FIRED: Final = "Page.domContentEventFired"
PAGE_FRAME_ATTACHED: Final = "Page.frameAttached"
PAGE_FRAME_DETACHED: Final = "Page.frameDetached"
PAGE_FRAME_NAVIGATED: Final = "Page.frameNavigated"
PAGE_FRAME_REQUESTED_NAVIGATION: Final = "Page.frameRequestedNavigation"
PAGE_FRAME_STARTED_LOADING: Final = "Page.frameStartedLoading"
PAGE_FRAME_STOPPED_LOADING: Final = "Page.frameStoppedLoading"
PAGE_JAVASCRIPT_DIALOG_CLOSED: Final = "Page.javascriptDialogClosed"
PAGE_JAVASCRIPT_DIALOG_OPENING: Final = "Page.javascriptDialogOpening"
PAGE_LIFECYCLE_EVENT: Final = "Page.lifecycleEvent"
PAGE_LOAD_EVENT_FIRED: Final = "Page.loadEventFired"
PAGE_NAVIGATED_WITHIN_DOCUMENT: Final = "Page.navigatedWithinDocument"
PAGE_SCREENCAST_FRAME: Final = "Page.screencastFrame"
PAGE_WINDOW_OPEN: Final = "Page.windowOpen"

# --- Network --------------------------------------------------------------------------
NETWORK_LOADING_FAILED: Final = "Network.loadingFailed"
NETWORK_LOADING_FINISHED: Final = "Network.loadingFinished"
NETWORK_REQUEST_WILL_BE_SENT: Final = "Network.requestWillBeSent"
NETWORK_RESPONSE_RECEIVED: Final = "Network.responseReceived"
NETWORK_DATA_RECEIVED: Final = "Network.dataReceived"
NETWORK_REQUEST_WILL_BE_SENT_EXTRA_INFO: Final = "Network.requestWillBeSentExtraInfo"
NETWORK_RESPONSE_RECEIVED_EXTRA_INFO: Final = "Network.responseReceivedExtraInfo"

# --- Browser (downloads, once Browser.setDownloadBehavior enabled their events) -------
BROWSER_DOWNLOAD_WILL_BEGIN: Final = "Browser.downloadWillBegin"
BROWSER_DOWNLOAD_PROGRESS: Final = "Browser.downloadProgress"

# --- Fetch (sent while the Fetch domain pauses requests) ------------------------------
FETCH_REQUEST_PAUSED: Final = "Fetch.requestPaused"

# --- Runtime --------------------------------------------------------------------------
RUNTIME_BINDING_CALLED: Final = "Runtime.bindingCalled"
RUNTIME_CONSOLE_API_CALLED: Final = "Runtime.consoleAPICalled"
RUNTIME_EXCEPTION_THROWN: Final = "Runtime.exceptionThrown"

# --- Log ------------------------------------------------------------------------------
LOG_ENTRY_ADDED: Final = "Log.entryAdded"
RUNTIME_EXECUTION_CONTEXT_DESTROYED: Final = "Runtime.executionContextDestroyed"
RUNTIME_EXECUTION_CONTEXTS_CLEARED: Final = "Runtime.executionContextsCleared"

# --- DOM (sent while the DOM domain is enabled) ---------------------------------------
DOM_ATTRIBUTE_MODIFIED: Final = "DOM.attributeModified"
DOM_ATTRIBUTE_REMOVED: Final = "DOM.attributeRemoved"
DOM_CHARACTER_DATA_MODIFIED: Final = "DOM.characterDataModified"
DOM_CHILD_NODE_COUNT_UPDATED: Final = "DOM.childNodeCountUpdated"
DOM_CHILD_NODE_INSERTED: Final = "DOM.childNodeInserted"
DOM_CHILD_NODE_REMOVED: Final = "DOM.childNodeRemoved"
DOM_DISTRIBUTED_NODES_UPDATED: Final = "DOM.distributedNodesUpdated"
DOM_DOCUMENT_UPDATED: Final = "DOM.documentUpdated"
DOM_INLINE_STYLE_INVALIDATED: Final = "DOM.inlineStyleInvalidated"
DOM_PSEUDO_ELEMENT_ADDED: Final = "DOM.pseudoElementAdded"
DOM_PSEUDO_ELEMENT_REMOVED: Final = "DOM.pseudoElementRemoved"
DOM_SHADOW_ROOT_POPPED: Final = "DOM.shadowRootPopped"
DOM_SHADOW_ROOT_PUSHED: Final = "DOM.shadowRootPushed"
