// Turning untrusted text into DOM. Everything the model, a tool or a file says reaches the
// page through `el`/`setText` (text nodes, never innerHTML) or through `markdown`, which
// renders with marked and then sanitises with DOMPurify before it touches the DOM.
//
// Model-written HTML may only be content: an allow-list of Markdown's own tags and a few
// attributes (no id, class, name or style, no forms, frames, SVG or images that load), so
// it cannot reuse the page's ids and classes to draw a fake dialog or card; `.md` in
// app.css also contains its layout and paint, so nothing inside can be positioned over the
// app. Invisible and direction-changing characters are shown as `<U+XXXX>` markers
// everywhere text is shown (`visibleNodes`), the rule of podcode-protocol's `invisible`.
import { marked, DOMPurify, hljs } from "./vendor/vendor.mjs";

marked.setOptions({ gfm: true, breaks: false });
// A `style` attribute in model-written HTML would be dropped by the sanitiser anyway, but
// parsing it (in DOMPurify's inert document) already makes the page's style-src policy
// report a violation on the console: it goes before anything parses it.
const STYLE_ATTR = /([\s/])style\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi;
marked.use({
  walkTokens(token) {
    if (token.type === "html" && typeof token.text === "string") token.text = token.text.replace(STYLE_ATTR, "$1");
  },
});

/** What a permission card says when its request holds such characters (as in the terminal). */
export const HIDDEN_CHARS_WARNING =
  "warning: this request contains invisible or direction-changing characters, shown as <U+XXXX>; what it does may differ from how it reads";

// The candidates (podcode-protocol `invisible::maybe_hidden`): format characters (Cf),
// line/paragraph separators, the combining grapheme joiner, Hangul fillers, variation
// selectors. `hiddenAt` lets joiners and one variation selector through in context.
const MAYBE_HIDDEN =
  /[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0001}\u{e0020}-\u{e007f}\u2028\u2029\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
const PICTOGRAPHIC = /[\u2190-\u2bff\u{1f000}-\u{1faff}]/u;
const JOINING = /[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff\ufb50-\ufdff\ufe70-\ufefc]/u;

const maybeHidden = (c) => c !== undefined && MAYBE_HIDDEN.test(c);
const joins = (c) => c !== undefined && JOINING.test(c) && !maybeHidden(c);
const endsEmoji = (c) => c !== undefined && (PICTOGRAPHIC.test(c) || c === "\ufe0f");

/** Whether the character at `i` of `chars` (code points) is hidden, given its neighbours. */
function hiddenAt(chars, i) {
  const c = chars[i];
  if (!maybeHidden(c)) return false;
  const prev = chars[i - 1];
  const next = chars[i + 1];
  if (c === "\u200d") return !((endsEmoji(prev) && next !== undefined && PICTOGRAPHIC.test(next)) || (joins(prev) && joins(next)));
  if (c === "\u200c") return !(joins(prev) && joins(next));
  if (c >= "\ufe00" && c <= "\ufe0f") return !(prev !== undefined && !/\s/u.test(prev) && !maybeHidden(prev));
  return true;
}

const marker = (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`;

/** Whether `text` holds an invisible or direction-changing character. */
export function hasHidden(text) {
  if (typeof text !== "string" || !MAYBE_HIDDEN.test(text)) return false;
  const chars = Array.from(text);
  return chars.some((_, i) => hiddenAt(chars, i));
}

/** `text` with such characters written as `<U+XXXX>` (for attributes such as `title`). */
export function visibleText(text) {
  text = String(text);
  if (!MAYBE_HIDDEN.test(text)) return text;
  const chars = Array.from(text);
  return chars.map((c, i) => (hiddenAt(chars, i) ? marker(c) : c)).join("");
}

/** `text` as nodes: plain runs as text nodes, each hidden character as a marked span. */
export function visibleNodes(text) {
  text = String(text);
  if (!MAYBE_HIDDEN.test(text)) return [document.createTextNode(text)];
  const chars = Array.from(text);
  const nodes = [];
  let run = "";
  chars.forEach((c, i) => {
    if (!hiddenAt(chars, i)) { run += c; return; }
    if (run) nodes.push(document.createTextNode(run));
    run = "";
    const span = document.createElement("span");
    span.className = "hidden-char";
    span.title = "an invisible or direction-changing character";
    span.textContent = marker(c);
    nodes.push(span);
  });
  if (run) nodes.push(document.createTextNode(run));
  return nodes;
}

/** Replaces `node`'s content with `text`, hidden characters shown. */
export function setText(node, text) {
  node.replaceChildren(...visibleNodes(text));
}

// Markdown's own output and nothing else; every attribute not listed is dropped.
const ALLOWED_TAGS = ["a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
  "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td",
  "th", "thead", "tr", "ul"];
const ALLOWED_ATTR = ["href", "title", "alt", "src", "start", "align", "class"];
const SAFE_URL = /^(https?:|mailto:)/i;

DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
  const name = data.attrName;
  // The only class kept is a fenced block's language, which picks its highlighting.
  if (name === "class") data.keepAttr = node.tagName === "CODE" && /^language-[\w+#.-]{1,40}$/.test(data.attrValue);
  else if (name === "align") data.keepAttr = /^(left|center|right)$/.test(data.attrValue);
  else if (name === "href" || name === "src") data.keepAttr = SAFE_URL.test(data.attrValue.trim());
  else if (name === "start") data.keepAttr = /^\d{1,9}$/.test(data.attrValue);
});
// Links from the model open in a new tab without handing it this page.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** `el("div", {class: "x"}, "text", child)`: children that are strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    if (c instanceof Node) e.append(c);
    else e.append(...visibleNodes(c));
  }
  return e;
}

/** Renders Markdown into `target`, sanitised, with fenced code highlighted. */
export function markdown(target, source) {
  target.replaceChildren(markdownFragment(source));
}

/**
 * Where `text` (Markdown whose start is outside any block) can be cut so that what comes
 * before it renders the same alone: the end of its last blank line that is outside a
 * fenced code block and followed by an unindented line (so no list item or indented code
 * goes on past it). 0 when there is no such place yet.
 */
export function stableCut(text) {
  let cut = 0;
  let fence = ""; // the open fence's marker; "" outside one
  let blank = false; // the line before was blank (outside a fence)
  let at = 0;
  for (;;) {
    const end = text.indexOf("\n", at);
    if (end < 0) break; // the last line may still grow
    const line = text.slice(at, end);
    const mark = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      // A closing fence: the same character, at least as long, nothing after it.
      if (mark && mark[1][0] === fence[0] && mark[1].length >= fence.length && !mark[2].trim()) fence = "";
      blank = false;
    } else {
      if (blank && line && !/^\s/.test(line)) cut = at;
      if (mark) fence = mark[1];
      blank = !line.trim();
    }
    at = end + 1;
  }
  return cut;
}

/** Markdown as a sanitised fragment, fenced code highlighted (see `markdown`). */
export function markdownFragment(source) {
  const html = marked.parse(source || "", { async: false });
  // Sanitised into an inert fragment: images are turned into links before the fragment
  // joins the page, so a model cannot make the browser fetch a URL (which could carry
  // what it read) just by writing an image.
  const frag = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const img of frag.querySelectorAll("img")) {
    const label = `[image: ${img.getAttribute("alt") || img.getAttribute("src") || ""}]`;
    const src = img.getAttribute("src");
    const link = src ? el("a", { href: src, target: "_blank", rel: "noopener noreferrer nofollow" }, label) : el("span", {}, label);
    img.replaceWith(link);
  }
  for (const code of frag.querySelectorAll("pre code")) highlight(code);
  // A table wider than the message scrolls sideways in its own box instead of breaking
  // words in its cells.
  for (const table of frag.querySelectorAll("table")) {
    const wrap = el("div", { class: "table-wrap" });
    table.replaceWith(wrap);
    wrap.append(table);
  }
  showHiddenIn(frag);
  return frag;
}

/** Replaces hidden characters in every text node under `root` by visible markers. */
function showHiddenIn(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const hits = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (hasHidden(n.data)) hits.push(n);
  for (const n of hits) n.replaceWith(...visibleNodes(n.data));
}

function highlight(code) {
  const lang = [...code.classList].find((c) => c.startsWith("language-"))?.slice(9);
  if (lang && hljs.getLanguage(lang)) {
    // highlight() escapes the source itself; its output is spans around escaped text.
    code.innerHTML = hljs.highlight(code.textContent, { language: lang, ignoreIllegals: true }).value;
    code.classList.add("hljs");
  }
}

/** A unified diff as coloured lines (text nodes only). */
export function diffView(diff) {
  const pre = el("pre", { class: "diff" });
  const lines = (diff || "").replace(/\n$/, "").split("\n");
  for (const line of lines) {
    let cls = "";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "hdr";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    pre.append(el("span", { class: cls }, line || " "));
  }
  return pre;
}

/** `12.3k`: token counts as the terminal shows them. */
export function tokens(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(2)}M`;
}

/** `12.3k in (8.0k cached) · 950 out · $0.0123`, like StepUsage::short in podcode-protocol. */
export function usageLine(u) {
  if (!u) return "";
  let s = `${tokens(u.input_tokens || 0)} in`;
  if (u.cache_read_tokens) s += ` (${tokens(u.cache_read_tokens)} cached)`;
  s += ` · ${tokens(u.output_tokens || 0)} out`;
  if (u.reasoning_tokens) s += ` (${tokens(u.reasoning_tokens)} reasoning)`;
  if (u.cost !== null && u.cost !== undefined) s += ` · $${u.cost.toFixed(4)}`;
  return s;
}

/** What a session tree spent (`tree`, the session with its sub-agents), with the
 * session's own figures after it when sub-agents spent any. */
export function treeUsageLine(own, tree) {
  if (!tree) return usageLine(own);
  const same = ["input_tokens", "output_tokens", "cost"].every((k) => (own?.[k] ?? null) === (tree[k] ?? null));
  return same ? usageLine(tree) : `${usageLine(tree)} (own ${usageLine(own)})`;
}

/** `own` plus `more` (a sub-agent request's usage), field by field. */
export function addUsage(own, more) {
  const out = { ...(own || {}) };
  for (const k of ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"]) {
    out[k] = (out[k] || 0) + (more?.[k] || 0);
  }
  if (more?.cost !== null && more?.cost !== undefined) out.cost = (out.cost || 0) + more.cost;
  return out;
}

export function ago(ms) {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}
