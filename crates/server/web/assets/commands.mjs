// Custom commands in the prompt box: typing `/` at the start lists the project's custom
// commands (`GET /api/commands`: Markdown prompt files and `[commands.NAME]`), filtered as
// the name is typed; ↑/↓ move, Tab or Enter puts `/name ` in the box, Esc closes the list.
// Text whose `/name` is one of them is sent as that command (`POST …/command`); any other
// text is a prompt, so "/usr/bin is…" still reaches the model as written. Descriptions come
// from the repository: they reach the page as text nodes only (`el`).
import { api } from "./api.mjs";
import { el } from "./render.mjs";

/** How long a fetched list is used before opening the list fetches it again. */
const STALE_MS = 30_000;

/**
 * `"/review src/a.rs"` → `{name: "review", arguments: "src/a.rs"}`: a slash, a name without
 * spaces, then the arguments (podcode-protocol's `slash_command`); null for other text.
 */
export function slashCommand(text) {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(String(text).trimStart());
  return m ? { name: m[1], arguments: (m[2] || "").trim() } : null;
}

export class CommandMenu {
  /** `input`: the prompt box; `list`: the (hidden) element the choices are drawn in. */
  constructor(input, list) {
    this.input = input;
    this.list = list;
    this.commands = [];
    this.fetched = 0;
    this.loading = null;
    this.shown = [];
    this.active = 0;
    // The box's text when Esc closed the list: it stays closed until the text changes.
    this.dismissed = null;
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", list.id);
    input.setAttribute("aria-expanded", "false");
    input.addEventListener("input", () => this.update());
    input.addEventListener("blur", () => this.close());
  }

  /** Fetches the list (one request at a time); a failure keeps the list it had. */
  refresh() {
    if (this.loading) return this.loading;
    this.fetched = Date.now();
    this.loading = api("GET", "/api/commands")
      .then((list) => { this.commands = Array.isArray(list) ? list : []; })
      .catch(() => { /* offered again on the next open; prompts still work */ })
      .finally(() => { this.loading = null; });
    return this.loading;
  }

  /** The command `text` runs (`{name, arguments}`), or null when it is a prompt. */
  parse(text) {
    const cmd = slashCommand(text);
    return cmd && this.commands.some((c) => c.name === cmd.name) ? cmd : null;
  }

  /** Shows the commands matching the `/name` being typed, or closes the list. */
  update() {
    const value = this.input.value;
    const m = /^\/(\S*)$/.exec(value);
    if (!m || value === this.dismissed) { this.close(); return; }
    this.dismissed = null;
    if (Date.now() - this.fetched > STALE_MS) {
      this.refresh().then(() => { if (this.input.value === value && document.activeElement === this.input) this.update(); });
    }
    const q = m[1].toLowerCase();
    const starts = this.commands.filter((c) => c.name.toLowerCase().startsWith(q));
    const inside = this.commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
    this.shown = [...starts, ...inside];
    if (!this.shown.length) { this.close(); return; }
    this.active = Math.min(this.active, this.shown.length - 1);
    this.draw();
  }

  draw() {
    const items = this.shown.map((c, i) => el("li", {
      id: `command-${i}`, role: "option", class: i === this.active ? "command active" : "command",
      "aria-selected": String(i === this.active),
      // Keeps the focus in the box, so the click picks instead of closing the list.
      onmousedown: (e) => { e.preventDefault(); this.pick(i); },
    },
    el("span", { class: "command-name" }, `/${c.name}`),
    c.argument_hint ? el("span", { class: "command-hint" }, c.argument_hint) : null,
    c.from_repository ? el("span", { class: "command-from", title: c.source }, "from the repository") : null,
    c.description ? el("span", { class: "command-desc" }, c.description) : null));
    this.list.replaceChildren(...items);
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.input.setAttribute("aria-activedescendant", `command-${this.active}`);
    this.list.children[this.active]?.scrollIntoView({ block: "nearest" });
  }

  close() {
    if (this.list.hidden) return;
    this.list.hidden = true;
    this.list.replaceChildren();
    this.shown = [];
    this.active = 0;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  /** Puts `/name ` in the box, ready for the arguments. */
  pick(i) {
    const c = this.shown[i];
    if (!c) return;
    this.input.value = `/${c.name} `;
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    this.close();
    this.input.focus();
  }

  /** A key pressed in the box: true when the open list took it. */
  key(e) {
    if (this.list.hidden || e.isComposing) return false;
    switch (e.key) {
      case "ArrowDown": this.active = (this.active + 1) % this.shown.length; this.draw(); return true;
      case "ArrowUp": this.active = (this.active + this.shown.length - 1) % this.shown.length; this.draw(); return true;
      case "Tab": case "Enter":
        if (e.shiftKey) return false;
        this.pick(this.active);
        return true;
      case "Escape": this.dismissed = this.input.value; this.close(); return true;
      default: return false;
    }
  }
}
