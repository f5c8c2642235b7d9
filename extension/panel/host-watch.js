// The side panel's view of the host connection: what the worker reports, and, while
// the host is unreachable and the panel open, a ping now and then (with backoff) so the
// panel finds the host again by itself and says so, without a Refresh. A ping through
// the worker also wakes a worker the browser stopped, and makes it connect at once.
//
// Timers are passed in, so the logic runs under `node --test`.

export const RETRY_FIRST_MS = 500;
export const RETRY_MAX_MS = 5_000;

/** The wait before ping number `attempt` (0, 1, ...): doubling, capped. */
export function retryDelay(attempt) {
  return Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_MAX_MS);
}

/**
 * @typedef {{state: "connected"|"disconnected", again: boolean, detail: string}} HostState
 *   `again`: connected after this panel saw the host gone
 */

export class HostWatch {
  /**
   * @param {{ping: () => Promise<unknown>, onChange: (state: HostState) => void,
   *          setTimer?: (fn: () => void, ms: number) => unknown,
   *          clearTimer?: (timer: unknown) => void}} options
   */
  constructor({ ping, onChange, setTimer = setTimeout, clearTimer = clearTimeout }) {
    this.ping = ping;
    this.onChange = onChange;
    this.setTimer = setTimer;
    this.clearTimer = clearTimer;
    /** @type {"unknown"|"connected"|"disconnected"} */
    this.state = "unknown";
    this.detail = "";
    this.sawDown = false;
    this.attempt = 0;
    this.timer = null;
  }

  /**
   * What the worker (or a ping) says of the host now: "connected", "disconnected", or
   * "connecting" (a port is open, the host has not answered yet: wait for its word).
   */
  report(state, detail = "") {
    if (state === "connecting") return;
    if (state === "connected") {
      this.stopRetrying();
      if (this.state === "connected") return;
      this.state = "connected";
      this.detail = "";
      this.onChange({ state, again: this.sawDown, detail: "" });
      return;
    }
    const changed = this.state !== "disconnected" || detail !== this.detail;
    this.state = "disconnected";
    this.detail = detail;
    this.sawDown = true;
    if (changed) this.onChange({ state: "disconnected", again: false, detail });
    this.retry();
  }

  retry() {
    if (this.timer !== null) return;
    const delay = retryDelay(this.attempt);
    this.attempt += 1;
    this.timer = this.setTimer(async () => {
      this.timer = null;
      if (this.state === "connected") return;
      try {
        await this.ping();
        this.report("connected");
      } catch (err) {
        this.report("disconnected", String(/** @type {any} */ (err)?.message ?? err));
      }
    }, delay);
  }

  stopRetrying() {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    this.attempt = 0;
  }
}

/** The command that registers the host for this browser, run in the Trimtab clone. */
export const INSTALL_COMMAND = ".venv/bin/trimtab install";

/**
 * What the person can do about a host the browser cannot start, from the browser's
 * words; null when there is nothing for them to run (the host exited, it restarts).
 * @param {string} detail
 * @returns {{why: string, command: string} | null}
 */
export function hostHelp(detail) {
  if (/native messaging host not found/i.test(detail)) {
    return { why: "The Trimtab host is not installed for this browser.",
      command: INSTALL_COMMAND };
  }
  if (/native messaging host is forbidden/i.test(detail)) {
    return { why: "The Trimtab host is installed, but not for this extension's id.",
      command: INSTALL_COMMAND };
  }
  return null;
}
