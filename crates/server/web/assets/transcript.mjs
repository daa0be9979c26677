// The transcript of the open session: built from the session's stored transcript, then kept
// live by its events (text deltas appended as they stream, tool cards updated in place,
// sub-agents summarised on their `task` card). A streaming message is drawn incrementally:
// its finished Markdown blocks once, then only its unfinished tail, at most once a frame —
// re-rendering the whole of a long answer every frame froze the page.
import { el, markdownFragment, stableCut, diffView, setText, visibleNodes } from "./render.mjs";
import { attachedNote, resultImages } from "./attach.mjs";

export class Transcript {
  constructor(root) {
    this.root = root;
    this.messages = new Map(); // message_id -> {el, text, kind}
    this.cards = new Map(); // call_id -> card parts
    this.subagents = new Map(); // child session id -> sub-agent card parts
    this.users = new Set(); // message ids of the prompts shown
    this.asks = new Map(); // request_id -> call_id of the open asks
    this.dirty = new Set();
    this.frame = 0;
    // Scrolled to the end, the view stays there when it shrinks (a permission card or the
    // todo list opening below it): the newest card stays whole instead of a sliver.
    this.stuck = true;
    root.addEventListener("scroll", () => { this.stuck = this.atBottom(); }, { passive: true });
    new ResizeObserver(() => {
      if (this.stuck) this.follow(true);
      // The room its scrollbar takes, which the panes below keep free on their right so
      // their edges line up with the messages'.
      root.parentElement?.style.setProperty("--scrollbar", `${root.offsetWidth - root.clientWidth}px`);
    }).observe(root);
  }

  clear() {
    this.root.replaceChildren();
    this.messages.clear();
    this.cards.clear();
    this.subagents.clear();
    this.users.clear();
    this.asks.clear();
  }

  /** Whether the view is scrolled to (near) the bottom, so new text keeps it there. */
  atBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 60;
  }
  follow(stick) { if (stick) this.root.scrollTop = this.root.scrollHeight; }

  /** The stored transcript (`GET /api/sessions/{id}`), as one batch. */
  load(items) {
    this.clear();
    for (const it of items) {
      if (it.kind === "user") this.user(it.text, it.files, it.message_id);
      else if (it.kind === "assistant" || it.kind === "reasoning") {
        this.append(it.message_id, it.text, it.kind);
      } else if (it.kind === "tool") {
        const c = this.card(it.call_id, it.tool);
        // A call that never ran (denied, say) has no title of its own: show what it
        // would have run, as the live card did.
        this.setTitle(c, it.title || argsTitle(it.args));
        const ok = it.state === "completed";
        const st = it.state === "running" || it.state === "pending" ? "running" : ok ? "done" : "failed";
        this.setState(c, st, it.state + (it.elapsed_ms != null ? ` · ${it.elapsed_ms} ms` : ""));
        this.setOutput(c, shownOutput(it.tool, it.output), it.diff);
        this.images(c, resultImages(it.call_id, it.attachments));
      } else if (it.kind === "compaction") {
        // As the live `compacted` event showed it.
        this.note(compactedText(it.reason, it.tokens_before, it.tokens_after));
      }
    }
    this.flush();
    this.follow(true);
  }

  /** A prompt; `messageId` once it is stored (`user_message`). */
  user(text, files, messageId) {
    const stick = this.atBottom();
    const box = el("div", { class: "msg user" }, text);
    if (messageId) this.named(box, messageId);
    if (files && files.length) box.append(attachedNote(files));
    this.root.append(box);
    this.follow(stick);
    return box;
  }

  /** A prompt on screen now shows `text` (what the model was sent) and its attached files. */
  retext(box, text, files) {
    setText(box, text);
    if (files && files.length) box.append(attachedNote(files));
  }

  restart(messageId) {
    for (const kind of ["assistant", "reasoning"]) {
      const m = this.messages.get(`${kind}:${messageId}`);
      if (m) { m.text = ""; m.redraw = true; this.dirty.add(m); }
    }
  }
  hasUser(messageId) { return this.users.has(messageId); }
  /** Marks a prompt on screen as the stored message `messageId`. */
  named(box, messageId) {
    box.dataset.message = messageId;
    this.users.add(messageId);
  }

  note(text, error = false) {
    const stick = this.atBottom();
    this.root.append(el("div", { class: error ? "note error" : "note" }, text));
    this.follow(stick);
  }

  /** Text of an assistant (or reasoning) message; created on its first delta. */
  append(messageId, text, kind = "assistant") {
    const key = `${kind}:${messageId}`;
    let m = this.messages.get(key);
    if (!m) {
      const body = el("div", { class: kind === "reasoning" ? "reasoning" : "md" });
      const box = el("div", { class: `msg ${kind === "reasoning" ? "thinking" : "assistant"}`, "data-message": messageId }, body);
      // `done`: how much of `text` is drawn for good; `tail`: the nodes drawn from the rest.
      m = { box, body, text: "", kind, done: 0, tail: [], redraw: false };
      this.messages.set(key, m);
      this.root.append(box);
    }
    m.text += text;
    this.dirty.add(m);
    // A hidden tab gets no animation frames: draw on a timer there.
    if (!this.frame) {
      this.frame = document.hidden ? setTimeout(() => this.flush(), 100) : requestAnimationFrame(() => this.flush());
    }
  }

  /** A plugin rewrote the message's last text block: show its final text instead. */
  replace(messageId, text) {
    const m = this.messages.get(`assistant:${messageId}`);
    if (!m) return false;
    m.text = m.text.slice(0, m.blockStart ?? 0);
    m.redraw = true;
    this.append(messageId, text);
    return true;
  }

  flush() {
    this.frame = 0;
    const stick = this.atBottom();
    for (const m of this.dirty) draw(m);
    this.dirty.clear();
    this.follow(stick);
  }

  card(callId, tool, parent = this.root) {
    let c = this.cards.get(callId);
    if (c) return c;
    const name = el("span", { class: "tool" }, tool);
    const title = el("span", { class: "ttl" });
    const st = el("span", { class: "st" }, "pending");
    const body = el("div", { class: "body" });
    const box = el("details", { class: "card running", "data-call": callId }, el("summary", {}, name, title, st), body);
    // `sub`: the newest sub-agent card under this (task) call's card.
    c = { box, name, title, st, body, tool, sub: null };
    this.cards.set(callId, c);
    const stick = this.atBottom();
    parent.append(box);
    this.follow(stick);
    return c;
  }
  /** A tool result's images under its output (`resultImages`). */
  images(c, thumbs) { if (thumbs) c.body.append(thumbs); }
  setTitle(c, title) { if (title) setText(c.title, title); }
  setState(c, state, label) {
    c.box.classList.remove("running", "waiting", "done", "failed");
    c.box.classList.add(state);
    setText(c.st, label);
  }
  setOutput(c, output, diff) {
    const parts = [];
    if (diff) parts.push(diffView(diff));
    // File tools repeat their diff in the model-facing output: show it once, coloured.
    if (diff && output) output = output.replace(diff.trim(), "").trim();
    if (output) parts.push(el("pre", {}, output));
    c.body.replaceChildren(...parts);
  }

  /** A call of this session waits for the user's answer to its ask (`permission_asked`,
   * live or from a snapshot's open asks) until `permission_resolved` closes it. */
  asked(ev) {
    const c = this.cards.get(ev.call_id);
    if (!c) return;
    this.asks.set(ev.request_id, ev.call_id);
    if (c.box.classList.contains("running")) this.setState(c, "waiting", "waiting for your answer");
  }

  /** Applies one event of this session; returns true when it changed the transcript. */
  event(ev) {
    switch (ev.type) {
      // A step streamed again from the log replaces whatever the store showed of it.
      case "step_started": this.restart(ev.message_id); return false;
      case "text_delta": this.append(ev.message_id, ev.text); return true;
      case "text_replaced": return this.replace(ev.message_id, ev.text);
      case "reasoning_delta": this.append(ev.message_id, ev.text, "reasoning"); return true;
      case "tool_requested": {
        // Text after this call is a new block of the message (a rewrite replaces only that).
        const m = this.messages.get(`assistant:${ev.message_id}`);
        if (m) m.blockStart = m.text.length;
        this.card(ev.call_id, ev.tool);
        return true;
      }
      case "tool_started": {
        const c = this.card(ev.call_id, ev.tool);
        this.setTitle(c, argsTitle(ev.args));
        this.setState(c, "running", "running");
        return true;
      }
      case "tool_metadata": {
        const c = this.cards.get(ev.call_id);
        if (!c) return false;
        this.setTitle(c, ev.title);
        if (ev.metadata && typeof ev.metadata === "object") {
          let meta = c.body.querySelector(".meta");
          if (!meta) { meta = el("div", { class: "meta" }); c.body.prepend(meta); }
          setText(meta, metaLine(ev.metadata));
        }
        return true;
      }
      case "tool_finished": {
        const c = this.card(ev.call_id, ev.tool);
        this.setTitle(c, ev.result?.title);
        this.setState(c, "done", `done · ${ev.duration_ms} ms`);
        const diff = typeof ev.result?.metadata?.diff === "string" ? ev.result.metadata.diff : null;
        let out = shownOutput(ev.tool, ev.result?.output || "");
        if (ev.spill_path) out += `\n\n(full output: ${ev.spill_path})`;
        this.setOutput(c, out, diff);
        this.images(c, resultImages(ev.call_id, ev.result?.attachments));
        return true;
      }
      case "tool_failed": {
        const c = this.card(ev.call_id, ev.tool);
        this.setState(c, "failed", `failed · ${ev.duration_ms} ms`);
        this.setOutput(c, ev.error, null);
        return true;
      }
      case "permission_resolved": {
        const c = this.cards.get(this.asks.get(ev.request_id));
        this.asks.delete(ev.request_id);
        // Answered: the call runs again (unless it already ended).
        if (c?.box.classList.contains("waiting")) this.setState(c, "running", "running");
        return true;
      }
      case "subagent": this.subagent(ev); return true;
      case "compacted":
        this.note(compactedText(ev.reason, ev.tokens_before, ev.tokens_after));
        return true;
      case "step_retry": this.note(`the model's stream broke (${ev.error}); retrying (attempt ${ev.attempt})`, true); return true;
      case "warning": this.note(ev.message, true); return true;
      case "turn_finished": {
        const s = ev.summary || {};
        if (s.end === "aborted") this.note("⏹ stopped");
        else if (s.end === "max_steps") this.note("the step limit was reached");
        else if (s.end === "error") this.note(`the turn failed: ${s.error || "unknown error"}`, true);
        return true;
      }
      default: return false;
    }
  }

  /** A sub-agent, compact: one line per call of the child, on the `task` call's card. */
  subagent(ev) {
    let s = this.subagents.get(ev.session_id);
    if (!s) {
      const head = el("div", { class: "meta" }, `↳ ${ev.agent}: ${ev.description}`);
      const steps = el("ul", { class: "steps" });
      const box = el("div", { class: "card subagent", "data-subagent": ev.session_id }, head, steps);
      s = { box, head, steps, calls: new Map(), text: "" };
      this.subagents.set(ev.session_id, s);
      // Right under its `task` card, visible without opening it.
      const parent = this.cards.get(ev.call_id) || this.card(ev.call_id, "task");
      (parent.sub?.box || parent.box).after(box);
      parent.sub = s;
    }
    const inner = ev.event;
    if (!inner) return;
    if (inner.type === "subagent") { this.subagent(inner); return; }
    const line = (id) => {
      let li = s.calls.get(id);
      if (!li) { li = el("li", {}); s.calls.set(id, li); s.steps.append(li); }
      return li;
    };
    if (inner.type === "tool_started") setText(line(inner.call_id), `${inner.tool} ${argsTitle(inner.args) || ""} …`);
    else if (inner.type === "tool_finished") setText(line(inner.call_id), `${inner.tool} ${inner.result?.title || ""} ✓`);
    else if (inner.type === "tool_failed") setText(line(inner.call_id), `${inner.tool} ✗`);
    else if (inner.type === "turn_finished") setText(s.head, `↳ ${ev.agent}: ${ev.description} — ${inner.summary?.end || "done"}`);
  }
}

/** Brings message `m`'s view up to its text, drawing only what is new. */
function draw(m) {
  if (m.redraw || m.done > m.text.length) {
    m.body.replaceChildren();
    m.done = 0;
    m.tail = [];
    m.redraw = false;
  }
  if (m.kind === "reasoning") {
    // Plain text only grows: append what came.
    m.body.append(...visibleNodes(m.text.slice(m.done)));
    m.done = m.text.length;
    return;
  }
  for (const n of m.tail) n.remove();
  m.tail = [];
  const rest = m.text.slice(m.done);
  // Finished blocks are drawn once and kept; a new block never changes how they render.
  const cut = stableCut(rest);
  if (cut > 0) {
    m.body.append(markdownFragment(rest.slice(0, cut)));
    m.done += cut;
  }
  const tail = markdownFragment(rest.slice(cut));
  m.tail = [...tail.childNodes];
  m.body.append(tail);
}

function compactedText(reason, before, after) {
  return `≡ compacted (${reason}): ~${before} → ~${after} tokens sent; the session keeps every message`;
}

/** What a call's card shows of its output: a `task` result without the wrapper the model
 * reads (the `task_id: …` line, the `<task_result>` tags), so the sub-agent's answer and the
 * notes after it; any other output as it is. The terminal's rule (`shown_output` in
 * crates/protocol/src/call_title.rs). */
export function shownOutput(tool, output) {
  const OPEN = "<task_result>\n";
  const CLOSE = "\n</task_result>\n";
  if (tool !== "task" || typeof output !== "string" || !output.startsWith("task_id: ")) return output;
  const at = output.indexOf(OPEN);
  if (at < 0) return output;
  const start = at + OPEN.length;
  const end = output.lastIndexOf(CLOSE);
  if (end < start) return output;
  const answer = output.slice(start, end).trimEnd();
  const rest = output.slice(end + CLOSE.length).trimEnd();
  return rest ? `${answer}\n${rest}` : answer;
}

/** A short title from a call's arguments until the tool sends its own. */
function argsTitle(args) {
  if (!args || typeof args !== "object") return "";
  for (const k of ["filePath", "file_path", "path", "command", "pattern", "url", "description", "query"]) {
    if (typeof args[k] === "string") return args[k];
  }
  return "";
}

function metaLine(meta) {
  return Object.entries(meta)
    .filter(([k, v]) => k !== "diff" && (typeof v !== "object" || v === null))
    .map(([k, v]) => `${k}: ${v}`)
    .join(" · ");
}
