// The page's only link to the server (docs/server-api.md): signing in, JSON calls, and one
// session's event stream that resumes from the last id it saw. The page never holds a
// secret: the server's sign-in cookie is HttpOnly and goes with every same-origin request
// (the event stream's too), so no token is kept in storage or put in a URL.

/**
 * Signs the page in: a one-time `#code=…` in the address bar is removed from it first (so
 * it stays in no history entry the page controls), then traded for the sign-in cookie.
 * True when signed in (by the code, or by a cookie from before); false when the page must
 * ask for the token.
 */
export async function restoreSignIn() {
  const m = location.hash.match(/(?:^#|&)code=([^&]+)/);
  if (m) {
    history.replaceState(null, "", location.pathname + location.search);
    try { await login({ code: decodeURIComponent(m[1]) }); return true; } catch { /* spent: maybe signed in already */ }
  }
  try { await api("GET", "/api/info"); return true; } catch (e) { if (e.status === 401) return false; throw e; }
}

/** Trades `{code}` or `{token}` for the sign-in cookie; an ApiError when refused. */
export async function login(body) { await api("POST", "/api/login", body); }
export async function logout() { await api("POST", "/api/logout"); }

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

/** `api("GET", "/api/sessions")`: the parsed JSON, or an ApiError with the server's text. */
export async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "the server cannot be reached (is `podcode serve` still running?)");
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON: keep the text */ }
  if (!res.ok) {
    const why = (json && json.error) || text || res.statusText;
    throw new ApiError(res.status, res.status === 401 && path !== "/api/login" ? "the token was refused" : why);
  }
  return json;
}

/**
 * One session's events. EventSource resends `Last-Event-ID` by itself when the connection
 * drops; when it gives up (server restarted, 5xx) we open a new one from the last id we saw,
 * so the server replays what we missed and nothing is lost or shown twice.
 */
export class EventStream {
  /** `after`: the log position to start after (a session snapshot's `resume_after`). */
  constructor(sessionId, onEvent, onState, after = null) {
    this.sessionId = sessionId;
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastId = after;
    this.closed = false;
    this.retry = 500;
    // When the device says the network is gone (a phone changing networks, a laptop
    // sleeping), drop the stream at once and resume from the last id when it is back,
    // instead of waiting for a dead TCP connection to time out.
    this.offline = () => { this.es?.close(); this.onState("reconnecting"); };
    this.online = () => { if (!this.closed) { this.es?.close(); this.open(); } };
    addEventListener("offline", this.offline);
    addEventListener("online", this.online);
    this.open();
  }
  open() {
    // The sign-in cookie authorises the stream; no secret goes in its URL.
    const q = new URLSearchParams();
    if (this.lastId !== null) q.set("last_event_id", String(this.lastId));
    const es = new EventSource(`/api/sessions/${encodeURIComponent(this.sessionId)}/events${q.size ? `?${q}` : ""}`);
    this.es = es;
    es.onopen = () => { this.retry = 500; this.onState("live"); };
    es.onmessage = (m) => this.deliver(m);
    es.onerror = () => {
      if (this.closed) return;
      if (es.readyState === EventSource.CLOSED) {
        // The server answered, but not with a stream. EventSource does not say why: ask,
        // since trying again cannot help a refused sign-in (a restarted server keeps no
        // sign-in of the one before) or a session that is gone.
        this.onState("reconnecting");
        this.why().then((state) => {
          if (this.closed || this.es !== es) return;
          if (state) { this.onState(state); return; }
          setTimeout(() => { if (!this.closed && this.es === es) this.open(); }, this.retry);
          this.retry = Math.min(this.retry * 2, 8000);
        });
      } else {
        this.onState("reconnecting");
      }
    };
    // Named events (`event: text_delta`) do not reach onmessage: listen to every type.
    for (const t of EVENT_TYPES) es.addEventListener(t, (m) => this.deliver(m));
  }
  /** Why the stream was refused: "signed-out" (401), "gone" (404), or null (try again). */
  async why() {
    try { await api("GET", `/api/sessions/${encodeURIComponent(this.sessionId)}`); } catch (e) {
      if (e.status === 401) return "signed-out";
      if (e.status === 404) return "gone";
    }
    return null;
  }
  deliver(m) {
    const id = Number(m.lastEventId);
    if (Number.isFinite(id) && m.lastEventId !== "") {
      if (this.lastId !== null && id <= this.lastId) return; // already shown
      this.lastId = id;
    }
    let ev;
    try { ev = JSON.parse(m.data); } catch { return; }
    this.onEvent(ev);
  }
  close() {
    this.closed = true;
    this.es?.close();
    removeEventListener("offline", this.offline);
    removeEventListener("online", this.online);
  }
}

const EVENT_TYPES = [
  "user_message", "turn_started", "step_started", "text_delta", "text_replaced", "reasoning_delta", "tool_requested",
  "tool_started", "tool_metadata", "tool_finished", "tool_failed", "permission_asked",
  "permission_resolved", "change_recorded", "reverted", "step_finished", "step_retry",
  "usage", "compacted", "turn_finished", "configured", "tools_reloaded", "warning", "subagent",
];
