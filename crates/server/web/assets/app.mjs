// The page: sign-in with the token, the sessions list, the open session (its transcript,
// todo list, permission prompts, Changes panel, pickers, usage) kept live by the session's
// event stream, custom commands in the prompt box, and the keyboard. See docs/server-api.md for every route used here.
import { api, restoreSignIn, login, EventStream } from "./api.mjs";
import { el, treeUsageLine, addUsage, ago, setText } from "./render.mjs";
import { Transcript } from "./transcript.mjs";
import { Permissions } from "./permissions.mjs";
import { ChangesPanel } from "./changes.mjs";
import { CommandMenu } from "./commands.mjs";
import { TodoCard } from "./todo.mjs";
import { ForkActions } from "./fork.mjs";
import { ComposerAttachments } from "./attach.mjs";

const $ = (id) => document.getElementById(id);
const ui = {
  app: $("app"), title: $("session-title"), list: $("session-list"), sessions: $("sessions"),
  prompt: $("prompt"), composer: $("composer"), send: $("send"), abort: $("abort"),
  usage: $("usage"), status: $("status"), notice: $("notice"), changes: $("changes"),
  toggleChanges: $("toggle-changes"), model: $("model-picker"), agent: $("agent-picker"),
  help: $("help"), login: $("login"),
};
const phone = matchMedia("(max-width: 760px)");
// A phone's keyboard has no Shift+Enter to speak of: there Enter is a new line and the
// Send button sends.
const touch = matchMedia("(pointer: coarse)");
const enterSends = () => !(phone.matches && touch.matches);

// `sending`: the bubbles of prompts this page sent whose `user_message` has not come back yet.
const state = { sessions: [], current: null, stream: null, busy: false, defaults: {}, sending: [], prompting: null };
const transcript = new Transcript($("transcript"));
const permissions = new Permissions($("permissions"), showError, () => { if (!phone.matches) ui.prompt.focus(); });
const todos = new TodoCard($("todos"));
const commands = new CommandMenu(ui.prompt, $("command-list"));
const changes = new ChangesPanel({
  body: $("changes-body"), result: $("revert-result"), count: $("changes-count"),
  revertAll: $("revert-session"), onError: showError,
});
new ForkActions($("transcript"), { current: () => state.current, onError: showError, onForked: (s) => { loadSessions(); openSession(s.id); } });
const attachments = new ComposerAttachments(ui.composer, ui.prompt, showError);

function showError(e) {
  if (e && e.status === 401) { signIn("The server refused the token. Paste the one `podcode serve` printed."); return; }
  ui.notice.textContent = (e && e.message) || String(e);
  ui.notice.hidden = false;
  clearTimeout(showError.t);
  showError.t = setTimeout(() => { ui.notice.hidden = true; }, 8000);
}

function signIn(error) {
  state.stream?.close();
  ui.login.hidden = false;
  $("login-error").hidden = !error;
  $("login-error").textContent = error || "";
  $("login-token").focus();
}

function setBusy(busy) {
  state.busy = busy;
  ui.abort.hidden = !busy;
  showStatus();
}

/** A lost connection matters more than "working…". */
function showStatus() {
  ui.status.textContent = ui.status.dataset.conn || (state.busy ? "working…" : "");
}

// ---- panels --------------------------------------------------------------------------

function showSessions(show) {
  ui.sessions.hidden = !show;
  ui.app.classList.toggle("no-sessions", !show);
}
function showChanges(show) {
  ui.changes.hidden = !show;
  ui.app.classList.toggle("no-changes", !show);
  ui.toggleChanges.setAttribute("aria-expanded", String(show));
  if (show) { if (phone.matches) showSessions(false); changes.refresh(); }
}

// ---- sessions ------------------------------------------------------------------------

async function loadSessions() {
  try { state.sessions = (await api("GET", "/api/sessions")) || []; } catch (e) { showError(e); return; }
  // A new session is named after its first prompt when that prompt is sent.
  const open = state.sessions.find((s) => s.id === state.current);
  if (open) setText(ui.title, open.title || "Untitled session");
  renderSessions();
}

function renderSessions() {
  const items = state.sessions.map((s) => el("li", { class: s.id === state.current ? "active" : "" },
    el("button", { type: "button", class: "open", onclick: () => openSession(s.id), title: s.directory || "" },
      el("span", {}, s.title || "Untitled session"),
      el("small", {}, `${s.agent} · ${ago(s.updated_at)}${s.busy ? " · working" : ""}`)),
    el("button", { type: "button", class: "rename", title: "Rename this session", "aria-label": `Rename ${s.title || "session"}`, onclick: () => renameSession(s) }, "✎"),
    el("button", { type: "button", class: "delete", title: "Delete this session", "aria-label": `Delete ${s.title || "session"}`, onclick: () => deleteSession(s) }, "✕")));
  if (!items.length) items.push(el("li", { class: "empty" }, "No sessions yet."));
  ui.list.replaceChildren(...items);
}

async function renameSession(s) {
  const title = prompt("Rename this session:", s.title || "");
  if (title === null || !title.trim() || title.trim() === s.title) return;
  try { await api("PATCH", `/api/sessions/${encodeURIComponent(s.id)}`, { title: title.trim() }); } catch (e) { showError(e); return; }
  loadSessions();
}

async function deleteSession(s) {
  if (!confirm(`Delete “${s.title || "Untitled session"}”? Its conversation and change journal are removed; files on disk stay as they are.`)) return;
  try { await api("DELETE", `/api/sessions/${encodeURIComponent(s.id)}`); } catch (e) { showError(e); return; }
  if (state.current === s.id) closeSession();
  loadSessions();
}

function closeSession() {
  state.stream?.close();
  state.stream = null;
  state.current = null;
  transcript.clear();
  todos.clear();
  permissions.clear();
  changes.show(null);
  ui.title.textContent = "Podcode";
  ui.usage.textContent = "";
  state.usage = null;
  setBusy(false);
  history.replaceState(null, "", location.pathname);
  welcome();
}

/** What an empty page says: where the agent works and how to start. */
function welcome() {
  const where = state.defaults.project ? ` in ${state.defaults.project}` : "";
  transcript.note(`Type a prompt below to start a new session${where}. Press ? for the keyboard shortcuts.`);
}

async function newSession() {
  const body = {};
  if (ui.agent.value) body.agent = ui.agent.value;
  if (ui.model.value) body.model = ui.model.value;
  const s = await api("POST", "/api/sessions", body);
  state.sessions.unshift(s);
  await openSession(s.id);
  return s.id;
}

async function openSession(id) {
  state.stream?.close();
  state.current = id;
  state.sending = [];
  renderSessions();
  if (phone.matches) showSessions(false);
  history.replaceState(null, "", `?session=${encodeURIComponent(id)}`);
  commands.refresh();
  let snap;
  try { snap = await api("GET", `/api/sessions/${encodeURIComponent(id)}`); } catch (e) {
    if (state.current === id) closeSession();
    showError(e);
    return;
  }
  if (state.current !== id) return;
  setText(ui.title, snap.session.title || "Untitled session");
  setPicker(ui.agent, snap.session.agent);
  setPicker(ui.model, snap.session.model || state.defaults.model);
  transcript.load(snap.transcript || []);
  todos.load(snap.transcript || []);
  permissions.clear();
  for (const ask of snap.asks || []) {
    permissions.ask(ask, id);
    if (!ask.session_id || ask.session_id === id) transcript.asked(ask);
  }
  // The session's own totals and its tree's (with sub-agents); live events keep both.
  state.usage = { own: snap.usage, tree: snap.tree_usage || snap.usage };
  ui.usage.textContent = treeUsageLine(state.usage.own, state.usage.tree);
  setBusy(!!snap.session.busy);
  changes.show(id);
  // The snapshot ends where the stream starts: a running turn is replayed whole from the
  // event log (its prompt, every delta, every call), so a reload mid-answer shows it once.
  state.stream = new EventStream(id, onEvent, onConn, snap.resume_after ?? null);
}

/** What the page says when the server no longer takes its sign-in (a restart makes a new
 * token and forgets every sign-in). */
const SIGNED_OUT_TEXT = "The server no longer takes this page's sign-in (it restarted, or the sign-in ended). Paste the token it printed, or open the sign-in link it printed.";

function onConn(s) {
  if (s === "signed-out") { ui.status.dataset.conn = ""; showStatus(); signIn(SIGNED_OUT_TEXT); return; }
  if (s === "gone") { closeSession(); showError(new Error("This session no longer exists on the server.")); loadSessions(); return; }
  ui.status.dataset.conn = s === "live" ? "" : "reconnecting…";
  showStatus();
}

function onEvent(ev) {
  transcript.event(ev);
  todos.event(ev);
  switch (ev.type) {
    case "user_message": {
      if (ev.session_id !== state.current || transcript.hasUser(ev.message_id)) break;
      // This page's own prompt is on screen already (shown when sent): give it its id; a
      // custom command's shows what the model was sent, as a reload will.
      const mine = state.sending.shift();
      if (mine) {
        transcript.named(mine, ev.message_id);
        if (mine.dataset.command || ev.files?.length) transcript.retext(mine, ev.text, ev.files);
      // Another client (or tab) sent it, or the running turn is being replayed: show it.
      } else transcript.user(ev.text, ev.files, ev.message_id);
      // Another client's first prompt titled the session: show that title now.
      if (!mine && !state.sessions.find((s) => s.id === state.current)?.title) loadSessions();
      break;
    }
    case "turn_started": setBusy(true); break;
    case "turn_finished":
      // A prompt the turn ended without storing (an unknown command) names nothing later.
      if (ev.session_id === state.current) state.sending = [];
      setBusy(false);
      loadSessions();
      break;
    case "permission_asked":
      permissions.ask(ev, ev.session || state.current);
      // A sub-agent's ask names a call of its own session, not a card here.
      if (!ev.session_id || ev.session_id === state.current) transcript.asked(ev);
      focusAsk();
      break;
    case "permission_resolved": permissions.resolved(ev.request_id); break;
    case "change_recorded": case "reverted": changes.soon(); break;
    case "usage": {
      // The session's own totals now; what sub-agents spent stays on top of them.
      const prev = state.usage || { own: null, tree: null };
      const subs = subtract(prev.tree, prev.own);
      state.usage = { own: ev.total, tree: addUsage(ev.total, subs) };
      ui.usage.textContent = treeUsageLine(state.usage.own, state.usage.tree) + contextLine(ev);
      break;
    }
    case "configured": setPicker(ui.agent, ev.agent); setPicker(ui.model, ev.model); break;
    case "subagent": {
      let inner = ev.event;
      while (inner?.type === "subagent") inner = inner.event;
      if (inner?.type === "change_recorded") changes.soon();
      if (inner?.type === "step_finished" && state.usage) {
        state.usage.tree = addUsage(state.usage.tree, inner.usage);
        ui.usage.textContent = treeUsageLine(state.usage.own, state.usage.tree);
      }
      break;
    }
    default: break;
  }
}

/** An ask takes the focus unless the user is writing something: its y / a / n / f keys
 * then work at once (in the empty prompt box they would type letters). */
function focusAsk() {
  const a = document.activeElement;
  const idle = !a || a === document.body || (a === ui.prompt && !ui.prompt.value.trim());
  if (idle) permissions.focusFirst();
}

/** `tree` less `own`: what the sub-agents spent. */
function subtract(tree, own) {
  const out = {};
  for (const k of ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"]) {
    out[k] = Math.max(0, (tree?.[k] || 0) - (own?.[k] || 0));
  }
  if (tree?.cost !== null && tree?.cost !== undefined) out.cost = Math.max(0, tree.cost - (own?.cost || 0));
  return out;
}

/** A placeholder now (so it sits before the answer), the stored text when it is read. */
function contextLine(ev) {
  if (!ev.context_window) return "";
  return ` · context ${Math.round((100 * ev.context_tokens) / ev.context_window)}%`;
}

// ---- prompt, abort, pickers ------------------------------------------------------------

async function send() {
  const text = ui.prompt.value.trim();
  if (!text) return;
  if (state.busy) { showError(new Error("A turn is running: wait for it, or press Esc to stop it.")); return; }
  ui.send.disabled = true;
  let bubble = null;
  try {
    const id = state.current || (await newSession());
    // `/name args` naming a custom command runs it; any other text is a prompt.
    const command = commands.parse(text);
    // Shown before the request: the turn's first events can arrive before its answer.
    bubble = transcript.user(text);
    if (command) bubble.dataset.command = command.name;
    state.sending.push(bubble);
    setBusy(true);
    // Emptied now, not when the request returns: an ask arriving first finds the box empty
    // (and takes the focus); a refused prompt puts the text back.
    ui.prompt.value = "";
    autosize();
    const path = `/api/sessions/${encodeURIComponent(id)}`;
    // A stop pressed while this request is on its way waits for it (`abort`): sent first,
    // it would reach a session with no turn yet and the turn would run on.
    const request = (async () => {
      if (command) return api("POST", `${path}/command`, command);
      // `@path` words naming files attach them, as in the terminal. Files the composer
      // holds are uploaded first, then named in the prompt's `files`.
      const files = attachments.count ? await attachments.upload(id) : [];
      await api("POST", `${path}/prompt`, { text, mentions: true, files });
      attachments.clear();
    })();
    state.prompting = request;
    try { await request; } finally { if (state.prompting === request) state.prompting = null; }
    // The server titled an untitled session from this prompt before it answered: the
    // header and the list show that title during the turn, not only after it.
    if (!state.sessions.find((s) => s.id === id)?.title) loadSessions();
  } catch (e) {
    if (bubble && !ui.prompt.value) { ui.prompt.value = text; autosize(); }
    bubble?.remove();
    state.sending = state.sending.filter((b) => b !== bubble);
    setBusy(false);
    showError(e);
  } finally { ui.send.disabled = false; }
}

async function abort() {
  if (!state.current) return;
  const id = state.current;
  // An "Allow" clicked from now on would answer nothing: the cards stop taking answers.
  permissions.stopping(id);
  if (state.prompting) await state.prompting.catch(() => {});
  try { await api("POST", `/api/sessions/${encodeURIComponent(id)}/abort`); } catch (e) { showError(e); }
}

/** Shows `value` as the picker's choice, and remembers it as what the session uses. */
function setPicker(select, value) {
  if (!value) return;
  if (![...select.options].some((o) => o.value === value)) select.append(el("option", { value }, value));
  select.value = value;
  select.dataset.current = value;
}

async function pick(kind, value) {
  const select = kind === "model" ? ui.model : ui.agent;
  if (!value) return;
  // No session yet: the choice applies when one is made (`newSession` sends it).
  if (!state.current) { select.dataset.current = value; return; }
  try { await api("POST", `/api/sessions/${encodeURIComponent(state.current)}/${kind}`, { [kind]: value }); } catch (e) {
    // Refused: the session keeps what it had, and so does the picker.
    if (select.dataset.current) select.value = select.dataset.current;
    showError(e);
  }
}

/** The model picker: usable models first; the rest disabled under a heading, each saying
 * why (a switch to one would be refused). */
function modelOptions(models) {
  const option = (m) => el("option", { value: m.id, title: m.unusable || "", disabled: !!m.unusable },
    m.unusable ? `${m.id} — ${shortWhy(m.unusable, m.id)}` : m.id);
  const usable = models.filter((m) => !m.unusable).map(option);
  const rest = models.filter((m) => m.unusable).map(option);
  return rest.length ? [...usable, el("optgroup", { label: "Not usable here (hover for why)" }, rest)] : usable;
}

/** The first clause of why model `id` is unusable ("needs an API key"), short enough for a
 * picker's line. */
function shortWhy(text, id) {
  let first = String(text).split(/[:;(]/)[0].trim();
  if (first.startsWith(id)) first = first.slice(id.length).trim();
  return first.length > 40 ? `${first.slice(0, 39)}…` : first || "not usable";
}

async function loadPickers() {
  try {
    const [info, models, agents] = await Promise.all([api("GET", "/api/info"), api("GET", "/api/models"), api("GET", "/api/agents")]);
    state.defaults = info || {};
    ui.model.replaceChildren(...modelOptions(models?.models || []));
    const as = (agents || []).filter((a) => !a.hidden && !a.disabled && a.mode !== "subagent")
      .map((a) => el("option", { value: a.name, title: a.description || "" }, a.name));
    ui.agent.replaceChildren(...as);
    setPicker(ui.model, models?.default || info?.model);
    setPicker(ui.agent, info?.agent);
    ui.model.disabled = false;
    ui.agent.disabled = false;
  } catch (e) { showError(e); }
}

function autosize() {
  ui.prompt.style.height = "auto";
  ui.prompt.style.height = `${Math.min(ui.prompt.scrollHeight + 2, innerHeight * 0.4)}px`;
}

// ---- keyboard ---------------------------------------------------------------------------

function typing(t) { return t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT"); }

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "Escape") {
    if (!ui.help.hidden) { ui.help.hidden = true; return; }
    // Esc in a text box while an ask is open leaves the box for the card (whose keys then
    // work); it does not stop the turn the user is about to answer.
    if (typing(e.target) && permissions.focusFirst()) { e.preventDefault(); return; }
    if (state.busy) { e.preventDefault(); abort(); return; }
    if (typing(e.target)) e.target.blur();
    return;
  }
  if (typing(e.target) || !ui.login.hidden) return;
  if (!ui.help.hidden) { if (e.key === "?") ui.help.hidden = true; return; }
  if (permissions.key(e.key)) { e.preventDefault(); return; }
  switch (e.key) {
    case "?": ui.help.hidden = false; $("help-close").focus(); break;
    case "c": showChanges(ui.changes.hidden); break;
    case "s": showSessions(ui.sessions.hidden); break;
    case "n": closeSession(); renderSessions(); ui.prompt.focus(); break;
    case "/": case "i": ui.prompt.focus(); break;
    default: return;
  }
  e.preventDefault();
});

ui.prompt.addEventListener("keydown", (e) => {
  // The open commands list takes its keys first (Esc closes it, not the turn).
  if (commands.key(e)) { e.preventDefault(); e.stopPropagation(); return; }
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && enterSends()) { e.preventDefault(); send(); }
});
ui.prompt.addEventListener("input", autosize);
ui.composer.addEventListener("submit", (e) => { e.preventDefault(); send(); });
ui.abort.addEventListener("click", abort);
ui.toggleChanges.addEventListener("click", () => showChanges(ui.changes.hidden));
$("close-changes").addEventListener("click", () => showChanges(false));
$("toggle-sessions").addEventListener("click", () => showSessions(ui.sessions.hidden));
$("new-session").addEventListener("click", () => {
  closeSession();
  renderSessions();
  // On a phone the list is a sheet over the page: out of the way of the new session.
  if (phone.matches) showSessions(false);
  ui.prompt.focus();
});
$("help-button").addEventListener("click", () => { ui.help.hidden = false; });
// The open session's title renames it when clicked.
ui.title.addEventListener("click", () => {
  const s = state.sessions.find((x) => x.id === state.current);
  if (s) renameSession(s);
});
$("help-close").addEventListener("click", () => { ui.help.hidden = true; });
ui.model.addEventListener("change", () => pick("model", ui.model.value));
ui.agent.addEventListener("change", () => pick("agent", ui.agent.value));
$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const t = $("login-token").value.trim();
  if (!t) return;
  try { await login({ token: t }); } catch (err) {
    signIn(err.status === 401 ? "The server refused the token. Paste the one `podcode serve` printed." : err.message);
    return;
  }
  $("login-token").value = "";
  ui.login.hidden = true;
  start();
});

// ---- start -------------------------------------------------------------------------------

async function start() {
  let signedIn;
  try { signedIn = await restoreSignIn(); } catch (e) { showError(e); return; }
  if (!signedIn) { signIn(); return; }
  await loadPickers();
  commands.refresh();
  await loadSessions();
  const wanted = new URLSearchParams(location.search).get("session");
  // Another project's session is not opened by itself: it can only be read here.
  const mine = state.sessions.find((s) => !s.other_project);
  if (wanted) await openSession(wanted);
  else if (mine) await openSession(mine.id);
  else welcome();
  // Not on a phone: focusing there would pop the keyboard over the page.
  if (!phone.matches) ui.prompt.focus();
}

function placeholder() {
  ui.prompt.placeholder = enterSends() ? "Ask Podcode… (Enter sends, Shift+Enter for a new line)" : "Message… (the Send button sends)";
}
phone.addEventListener("change", placeholder);
touch.addEventListener("change", placeholder);
placeholder();
showSessions(!phone.matches);
showChanges(false);
start();
