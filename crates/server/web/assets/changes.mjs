// The Changes panel: the session's journaled changes grouped by prompt and tool call, each
// with its diff (fetched when opened), and reverts of a change, a call, one turn (undone and
// redone whole), everything since a prompt or the whole session. A refused revert shows
// the conflicting file's diff and offers the same revert with force.
import { api } from "./api.mjs";
import { el, diffView } from "./render.mjs";

export class ChangesPanel {
  constructor({ body, result, count, revertAll, onError }) {
    this.body = body;
    this.result = result;
    this.count = count;
    this.onError = onError;
    this.sessionId = null;
    this.timer = 0;
    revertAll.addEventListener("click", () => {
      if (!this.sessionId) return;
      if (confirm("Undo every change this session made?")) this.revert({ kind: "session", id: this.sessionId });
    });
  }

  show(sessionId) {
    this.sessionId = sessionId;
    this.last = null;
    this.result.hidden = true;
    this.body.replaceChildren();
    this.count.hidden = true;
    if (sessionId) this.refresh();
  }

  /** Reloads soon; a burst of change events costs one request. */
  soon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 150);
  }

  async refresh() {
    const id = this.sessionId;
    if (!id) return;
    let data;
    try { data = await api("GET", `/api/sessions/${encodeURIComponent(id)}/changes`); } catch (e) { this.onError(e); return; }
    if (id !== this.sessionId) return;
    // Redraw only what changed: an unchanged list keeps its nodes (open diffs, focus).
    const seen = JSON.stringify(data);
    if (seen === this.last) return;
    this.last = seen;
    const open = new Set([...this.body.querySelectorAll("details.change[open]")].map((d) => d.dataset.change));
    const prompts = data?.prompts || [];
    let live = 0;
    const groups = prompts.map((p) => {
      const calls = p.calls.map((c) => {
        const changes = c.changes.map((ch) => {
          if (!ch.reverted) live++;
          return this.change(ch, open.has(ch.id));
        });
        const head = el("div", { class: "call-head" },
          el("span", { class: "name" }, c.label || (c.call_id ? "tool call" : "reverts")),
          c.call_id && c.changes.length > 1 ? el("button", {
            type: "button", class: "small", title: "Undo every change of this tool call",
            onclick: () => this.revert({ kind: "call", id: c.call_id }),
          }, "Revert call") : null);
        return el("div", { class: "call" }, head, changes);
      });
      const mine = p.calls.flatMap((c) => c.changes);
      const undone = mine.length > 0 && mine.every((ch) => ch.reverted);
      const head = el("div", { class: "group-head" },
        el("span", { class: "prompt", title: p.text || "" }, p.text ? `“${p.text}”` : "Before any prompt"),
        mine.length ? el("button", {
          type: "button", class: "small turn-toggle",
          title: undone ? "Make every change of this turn again" : "Undo every change of this turn (later turns keep theirs)",
          onclick: () => this.toggleTurn(mine, undone),
        }, undone ? "Redo turn" : "Undo turn") : null,
        p.message_id ? el("button", {
          type: "button", class: "small", title: "Undo every change made since this prompt",
          onclick: () => this.revert({ kind: "since_message", id: p.message_id }),
        }, "Revert since") : null);
      return el("section", { class: "group" }, head, calls);
    });
    if (!groups.length) groups.push(el("p", { class: "empty" }, "No file changes in this session yet. Edits the agent makes show up here, and each one can be undone."));
    this.body.replaceChildren(...groups);
    this.count.textContent = String(live);
    this.count.hidden = live === 0;
  }

  change(ch, open) {
    const diffBox = el("div", {});
    const d = el("details", { class: `change${ch.reverted ? " reverted" : ""}`, "data-change": ch.id },
      el("summary", {},
        el("span", { class: "file", title: ch.file }, ch.display || ch.file),
        el("span", { class: "op" }, `${ch.op}${ch.additions != null ? ` +${ch.additions} −${ch.deletions}` : ""}${ch.reverted ? " · reverted" : ""}`),
        el("button", {
          type: "button", class: "small", title: ch.reverted ? "Redo this change" : "Undo this change",
          // A redo reverts the revert: reverting the change again would do nothing.
          onclick: (e) => { e.preventDefault(); this.revert({ kind: "change", id: ch.toggle || ch.id }, false, ch.reverted); },
        }, ch.reverted ? "Redo" : "Revert")),
      diffBox);
    const load = async () => {
      if (diffBox.childElementCount) return;
      try {
        const full = await api("GET", `/api/sessions/${encodeURIComponent(this.sessionId)}/changes/${encodeURIComponent(ch.id)}`);
        diffBox.replaceChildren(diffView(full.diff || "(no textual difference)"));
      } catch (e) { this.onError(e); }
    };
    d.addEventListener("toggle", () => { if (d.open) load(); });
    if (open) { d.open = true; }
    return d;
  }

  /**
   * Undoes every change of one turn still in effect, newest first (so a file changed
   * twice goes back step by step), or (`redo`) makes every one of them again, oldest
   * first. A conflict stops it there and is shown as any revert's is.
   */
  async toggleTurn(changes, redo) {
    const id = this.sessionId;
    const todo = changes.filter((ch) => ch.reverted === redo).sort((a, b) => a.time - b.time);
    if (!redo) todo.reverse();
    const files = [];
    for (const ch of todo) {
      const target = { kind: "change", id: redo ? ch.toggle || ch.id : ch.id };
      let r;
      try {
        r = await api("POST", `/api/sessions/${encodeURIComponent(id)}/revert`, { target, force: false });
      } catch (e) { this.onError(e); break; }
      if (r.conflict || r.error) { this.report(r, target, redo); this.refresh(); return; }
      files.push(...r.reverted.map((c) => c.file));
    }
    const n = files.length;
    this.report({ reverted: files.map((file) => ({ file })), skipped: [] }, null, redo, n ? `${redo ? "Redid" : "Undid"} the turn: ${n} change${n === 1 ? "" : "s"}: ${[...new Set(files)].join(", ")}` : null);
    this.refresh();
  }

  /** `redo`: the target is a revert record, and reverting it restores a change. */
  async revert(target, force = false, redo = false) {
    const id = this.sessionId;
    let report;
    try {
      report = await api("POST", `/api/sessions/${encodeURIComponent(id)}/revert`, { target, force });
    } catch (e) { this.onError(e); return; }
    this.report(report, target, redo);
    this.refresh();
  }

  /** `summary`: what to say instead of the usual line when it went through. */
  report(r, target, redo = false, summary = null) {
    const box = this.result;
    box.classList.toggle("conflict", !!r.conflict);
    const parts = [];
    if (r.error) {
      parts.push(el("p", { class: "error" }, `Nothing was reverted: ${r.error}`));
    } else if (r.conflict) {
      parts.push(
        el("p", {}, el("strong", {}, "Nothing was reverted: "),
          `${r.conflict.file} changed since Podcode wrote it. Here is how it differs:`),
        diffView(r.conflict.diff),
        el("p", {},
          el("button", { type: "button", class: "danger", onclick: () => this.revert(target, true, redo) }, redo ? "Redo anyway" : "Revert anyway"),
          " ", el("span", { class: "hint" }, "overwrites those edits")));
    } else {
      const n = r.reverted.length;
      const done = redo ? "Redid" : "Reverted";
      let msg = n === 0 ? `Nothing to ${redo ? "redo" : "revert"}.` : `${done} ${n} change${n === 1 ? "" : "s"}: ${[...new Set(r.reverted.map((c) => c.file))].join(", ")}`;
      if (r.skipped?.length) msg += ` (${r.skipped.length} already reverted)`;
      parts.push(el("p", {}, summary || msg));
    }
    parts.push(el("button", { type: "button", class: "small", onclick: () => { box.hidden = true; } }, "Dismiss"));
    box.replaceChildren(...parts);
    box.hidden = false;
  }
}
