// Turning untrusted text into DOM. Everything the model, a tool or a file says reaches the
// page through `el`/`text` (textContent, never innerHTML) or through `markdown`, which
// renders with marked and then sanitises with DOMPurify before it touches the DOM.
import { marked, DOMPurify, hljs } from "./vendor/vendor.mjs";

marked.setOptions({ gfm: true, breaks: false });

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
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** Renders Markdown into `target`, sanitised, with fenced code highlighted. */
export function markdown(target, source) {
  const html = marked.parse(source || "", { async: false });
  target.innerHTML = DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe"],
    FORBID_ATTR: ["style"],
  });
  for (const code of target.querySelectorAll("pre code")) highlight(code);
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

export function ago(ms) {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}
