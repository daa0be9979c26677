// Permission prompts: one card per open ask, answered with once / always / reject / reject
// with feedback (buttons or y / a / n / f). The first reply of any client wins; a
// `permission_resolved` event (or a 409 from the server) closes the card everywhere.
import { api } from "./api.mjs";
import { el, diffView, hasHidden, HIDDEN_CHARS_WARNING } from "./render.mjs";

// What a tool attaches to explain its ask, in the order the terminal shows it.
const DETAIL_KEYS = ["command", "denied", "description", "path", "diff", "preview"];
// A diff longer than this shows its head and a button for the rest: a 400-line write would
// otherwise push the transcript and the prompt box off the screen.
const DIFF_HEAD_LINES = 24;

/** The diff of an ask: its head when long, the whole one a click away. */
function boundedDiff(diff) {
  const lines = diff.replace(/\n$/, "").split("\n");
  if (lines.length <= DIFF_HEAD_LINES) return diffView(diff);
  const box = el("div", { class: "perm-diff" });
  const more = el("button", {
    type: "button", class: "small full-diff",
    onclick: () => { box.replaceChildren(diffView(diff)); },
  }, `Show the full diff (${lines.length} lines)`);
  box.append(diffView(lines.slice(0, DIFF_HEAD_LINES).join("\n")), more);
  return box;
}

export class Permissions {
  /** `onIdle`: the last open card closed while it had the focus (give it back). */
  constructor(root, onError, onIdle = () => {}) {
    this.root = root;
    this.onError = onError;
    this.onIdle = onIdle;
    this.open = new Map(); // request_id -> {box, session}
  }

  /** Moves the focus to the oldest card, where its y / a / n / f keys work. */
  focusFirst() {
    const p = this.open.get(this.first());
    if (!p) return false;
    p.box.focus({ preventScroll: true });
    return true;
  }

  /** The turn of `session` is being stopped: its cards take no answer any more (the
   * server closes the asks; its `permission_resolved` removes the cards). */
  stopping(session) {
    for (const p of this.open.values()) {
      if (p.session !== session) continue;
      p.box.classList.add("stopping");
      for (const b of p.box.querySelectorAll("button, input")) b.disabled = true;
    }
  }

  clear() { this.root.replaceChildren(); this.open.clear(); }

  ask(ev, session) {
    if (this.open.has(ev.request_id)) return;
    const req = ev.request || {};
    const meta = req.metadata && typeof req.metadata === "object" ? req.metadata : {};
    const who = meta.subagent ? ` (sub-agent ${typeof meta.subagent === "string" ? meta.subagent : meta.subagent.agent || ""})` : "";
    const details = [];
    for (const k of DETAIL_KEYS) {
      const v = meta[k];
      if (typeof v !== "string" || !v) continue;
      details.push(k === "diff" ? boundedDiff(v) : el("div", { class: "patterns" }, `${k}: ${v}`));
    }
    const always = (req.always && req.always.length ? req.always : req.patterns) || [];
    const feedback = el("input", { type: "text", placeholder: "Tell the agent what to do instead", "aria-label": "Feedback" });
    const fbRow = el("form", { class: "feedback", hidden: true, onsubmit: (e) => { e.preventDefault(); this.reply(ev.request_id, { reply: "reject", feedback: feedback.value.trim() || undefined }); } },
      feedback, el("button", { type: "submit" }, "Send and reject"));
    // Text goes through `el`, which shows invisible and direction-changing characters as
    // markers; the card also says so, as the terminal prompt does.
    const hidden = hasHidden(String(ev.tool)) || hasHidden(JSON.stringify(req));
    const box = el("div", { class: "perm", role: "alertdialog", tabindex: "-1", "data-request": ev.request_id },
      el("h3", {}, `${ev.tool} asks for ${req.permission}${who}`),
      hidden ? el("p", { class: "hidden-warning", role: "alert" }, `⚠ ${HIDDEN_CHARS_WARNING}`) : null,
      // What the call would do scrolls inside the card; the answers stay in view below it.
      el("div", { class: "perm-body" },
        el("div", { class: "patterns" }, (req.patterns || []).join("\n")),
        details),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", onclick: () => this.reply(ev.request_id, { reply: "once" }) }, "Allow once (y)"),
        el("button", { type: "button", onclick: () => this.reply(ev.request_id, { reply: "always" }) }, "Always (a)"),
        el("button", { type: "button", class: "danger", onclick: () => this.reply(ev.request_id, { reply: "reject" }) }, "Reject (n)"),
        el("button", { type: "button", onclick: () => { fbRow.hidden = false; feedback.focus(); } }, "Reject with feedback (f)")),
      // What "Always" remembers, in view (a tooltip shows on no phone and few eyes).
      el("p", { class: "always-note" }, `Always allows from now on, in this project: ${req.permission} ${always.join(", ")}`),
      fbRow);
    this.open.set(ev.request_id, { box, session, fbRow, feedback });
    this.root.append(box);
    box.scrollIntoView({ block: "nearest" });
  }

  resolved(requestId) {
    const p = this.open.get(requestId);
    if (!p) return;
    const focused = p.box.contains(document.activeElement);
    p.box.remove();
    this.open.delete(requestId);
    if (focused && !this.focusFirst()) this.onIdle();
  }

  /** The oldest open ask, for the y / a / n / f keys. */
  first() { return this.open.keys().next().value; }

  key(k) {
    const id = this.first();
    if (!id || this.open.get(id).box.classList.contains("stopping")) return false;
    if (k === "y") this.reply(id, { reply: "once" });
    else if (k === "a") this.reply(id, { reply: "always" });
    else if (k === "n") this.reply(id, { reply: "reject" });
    else if (k === "f") { const p = this.open.get(id); p.fbRow.hidden = false; p.feedback.focus(); }
    else return false;
    return true;
  }

  async reply(requestId, body) {
    const p = this.open.get(requestId);
    if (!p) return;
    for (const b of p.box.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", `/api/sessions/${encodeURIComponent(p.session)}/asks/${encodeURIComponent(requestId)}`, body);
      this.resolved(requestId);
    } catch (e) {
      if (e.status === 409) { this.resolved(requestId); return; } // another client answered first
      for (const b of p.box.querySelectorAll("button")) b.disabled = false;
      this.onError(e);
    }
  }
}
