// "Fork from here" on each stored prompt of the transcript (`.msg.user[data-message]`): a new
// session holding the conversation up to and including that prompt
// (`POST /api/sessions/{id}/fork`), which the page then opens. The button carries no text of
// its own (its label is drawn by extras.css), so a prompt's text stays exactly what was sent.
import { api } from "./api.mjs";
import { el } from "./render.mjs";

/** Links extras.css (the styles of the page's newer modules) once. */
export function extraStyles() {
  if (document.querySelector("link[data-extras]")) return;
  document.head.append(el("link", { rel: "stylesheet", href: "/assets/extras.css", "data-extras": true }));
}

export const FORK_LABEL = "Fork from here";

export class ForkActions {
  /**
   * `root`: the transcript's element. `current()`: the open session's id. `onForked(s)`: the
   * new session (SessionInfo) was made. `onError(e)`: the server refused.
   */
  constructor(root, { current, onForked, onError }) {
    this.root = root;
    this.current = current;
    this.onForked = onForked;
    this.onError = onError;
    this.busy = false;
    extraStyles();
    // Prompts are added, named (`data-message`) and redrawn by the transcript: each one that
    // is stored gets its button, whenever that happens.
    new MutationObserver(() => this.decorate()).observe(root, {
      childList: true, subtree: true, attributes: true, attributeFilter: ["data-message"],
    });
    this.decorate();
  }

  decorate() {
    for (const box of this.root.querySelectorAll(".msg.user[data-message]")) {
      if (box.querySelector(":scope > button.fork")) continue;
      box.append(el("button", {
        type: "button", class: "fork", title: FORK_LABEL, "aria-label": FORK_LABEL,
        onclick: (e) => { e.stopPropagation(); this.fork(box.dataset.message); },
      }));
    }
  }

  async fork(messageId) {
    const id = this.current();
    if (!id || !messageId || this.busy) return;
    this.busy = true;
    try {
      const s = await api("POST", `/api/sessions/${encodeURIComponent(id)}/fork`, { messageId });
      this.onForked(s);
    } catch (e) { this.onError(e); } finally { this.busy = false; }
  }
}
