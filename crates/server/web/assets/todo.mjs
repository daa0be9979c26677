// The session's todo list as a checklist card above the prompt box. The list is the newest
// finished `todowrite` call's (`{content, status, priority}` items): taken from the stored
// transcript when a session opens (the call's arguments) and from each `tool_finished`
// event of the session's own `todowrite` (`result.metadata.todos`). A sub-agent's list is
// its own and is not shown here. The card is hidden while the session has no list.
import { el, setText } from "./render.mjs";

/** The marks `podcode run` prints (podcode-core's `todo_lines`). */
const MARKS = { completed: "[x]", in_progress: "[>]", cancelled: "[-]", pending: "[ ]" };

/** The list a stored `todowrite` call set, or null. */
function storedList(item) {
  if (Array.isArray(item.args?.todos)) return item.args.todos;
  try {
    const out = JSON.parse(item.output);
    return Array.isArray(out) ? out : null;
  } catch { return null; }
}

export class TodoCard {
  constructor(root) {
    this.root = root;
    this.count = el("span", { class: "todo-count" });
    this.items = el("ul", { class: "todo-items" });
    // Open at first; folded or not, the user's choice is kept across updates.
    this.box = el("details", { class: "todo-card", open: true },
      el("summary", {}, el("span", { class: "todo-title" }, "Todo list"), this.count), this.items);
    root.replaceChildren(this.box);
    root.hidden = true;
  }

  clear() { this.show(null); }

  /** The stored transcript (`GET /api/sessions/{id}`): its newest finished `todowrite`. */
  load(items) {
    let todos = null;
    for (const it of items || []) {
      if (it.kind === "tool" && it.tool === "todowrite" && it.state === "completed") todos = storedList(it) ?? todos;
    }
    this.show(todos);
  }

  /** One event of the session: a finished `todowrite` replaces the list. */
  event(ev) {
    if (ev.type !== "tool_finished" || ev.tool !== "todowrite") return;
    const todos = ev.result?.metadata?.todos;
    if (Array.isArray(todos)) this.show(todos);
  }

  show(todos) {
    const list = (todos || []).filter((t) => t && typeof t.content === "string");
    this.root.hidden = list.length === 0;
    if (!list.length) { this.items.replaceChildren(); return; }
    const left = list.filter((t) => t.status === "pending" || t.status === "in_progress").length;
    setText(this.count, left ? `${left} of ${list.length} left` : "nothing left");
    this.items.replaceChildren(...list.map((t) => {
      const status = Object.hasOwn(MARKS, t.status) ? t.status : "pending";
      const priority = typeof t.priority === "string" ? `${t.priority} priority` : "";
      return el("li", { class: `todo ${status}`, "data-status": status, title: `${status.replace("_", " ")}${priority ? ` · ${priority}` : ""}` },
        el("span", { class: "todo-mark" }, MARKS[status]), " ",
        el("span", { class: "todo-text" }, t.content));
    }));
  }
}
