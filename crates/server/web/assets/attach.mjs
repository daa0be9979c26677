// Attachments: files the composer attaches to the next prompt (the paperclip, dropping files
// on the composer, pasting an image or file into the prompt box), shown as chips with a
// remove ×, uploaded when the prompt is sent (`POST /api/sessions/{id}/attachments`) and
// named in its `files`; and how the transcript shows attached files (uploaded images as
// thumbnails) and the images a tool's result carried.
import { ApiError } from "./api.mjs";
import { el } from "./render.mjs";
import { extraStyles } from "./fork.mjs";

/** The most an attachment may be (the server's limit too). */
export const MAX_BYTES = 10 * 1024 * 1024;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
// `<data dir>/attachments/<session>/<att_…>-<name>`: a file the page uploaded.
const UPLOADED = /[\\/]attachments[\\/]([A-Za-z0-9_]+)[\\/](att_[a-z0-9]+-([^\\/]+))$/;

export class ComposerAttachments {
  /** `form`: the composer; `prompt`: its text box; `onError(e)`: shows a refusal. */
  constructor(form, prompt, onError) {
    extraStyles();
    this.onError = onError;
    this.items = []; // {file, name, chip, path?, session?}
    this.input = el("input", {
      type: "file", multiple: true, id: "attach-input", class: "attach-input", tabindex: "-1",
      "aria-hidden": "true", onchange: () => { this.add([...this.input.files]); this.input.value = ""; },
    });
    this.button = el("button", {
      type: "button", id: "attach", class: "attach", title: "Attach files (or drop or paste them here)",
      "aria-label": "Attach files", onclick: () => this.input.click(),
    });
    this.chips = el("div", { id: "attachments", class: "attachments", hidden: true });
    form.insertBefore(this.chips, prompt);
    form.querySelector(".composer-row")?.prepend(this.button);
    form.append(this.input);
    const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
    form.addEventListener("dragover", (e) => { if (hasFiles(e)) { e.preventDefault(); form.classList.add("dropping"); } });
    form.addEventListener("dragleave", () => form.classList.remove("dropping"));
    form.addEventListener("drop", (e) => {
      form.classList.remove("dropping");
      if (!hasFiles(e)) return;
      e.preventDefault();
      this.add([...e.dataTransfer.files]);
    });
    prompt.addEventListener("paste", (e) => {
      const files = [...(e.clipboardData?.files || [])];
      if (!files.length) return;
      e.preventDefault();
      this.add(files);
    });
  }

  get count() { return this.items.length; }

  add(files) {
    for (const file of files) {
      const name = file.name || (file.type.startsWith("image/") ? `pasted.${file.type.slice(6)}` : "pasted.txt");
      if (file.size > MAX_BYTES) { this.onError(new Error(`${name} is larger than 10 MB, the most an attachment may be`)); continue; }
      const item = { file, name };
      const remove = el("button", {
        type: "button", class: "chip-remove", title: `Remove ${name}`, "aria-label": `Remove ${name}`,
        onclick: () => this.remove(item),
      }, "×");
      item.chip = el("span", { class: "chip", title: name }, el("span", { class: "chip-name" }, name), remove);
      if (IMAGE_TYPES.includes(file.type)) {
        // A data: URL: the page's policy takes no blob: images.
        const reader = new FileReader();
        reader.onload = () => item.chip.prepend(el("img", { class: "chip-thumb", src: String(reader.result), alt: "" }));
        reader.readAsDataURL(file);
      }
      this.items.push(item);
    }
    this.render();
  }

  remove(item) {
    this.items = this.items.filter((i) => i !== item);
    this.render();
  }

  render() {
    this.chips.replaceChildren(...this.items.map((i) => i.chip));
    this.chips.hidden = !this.items.length;
  }

  /** Uploads the files to session `id` (once each); their paths, for the prompt's `files`. */
  async upload(id) {
    const paths = [];
    for (const item of this.items) {
      if (item.session !== id) {
        item.path = (await upload(id, item.file, item.name)).path;
        item.session = id;
      }
      paths.push(item.path);
    }
    return paths;
  }

  /** The prompt went: the chips go. */
  clear() { this.items = []; this.render(); }
}

/** `POST /api/sessions/{id}/attachments?name=…` with the file's bytes. */
async function upload(id, file, name) {
  let res;
  try {
    res = await fetch(`/api/sessions/${encodeURIComponent(id)}/attachments?name=${encodeURIComponent(name)}`, {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/octet-stream" }, body: file,
    });
  } catch {
    throw new ApiError(0, "the server cannot be reached (is `podcode serve` still running?)");
  }
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) throw new ApiError(res.status, `${name}: ${(json && json.error) || text || res.statusText}`);
  return json;
}

/** What a prompt's attached files look like in the transcript: `attached: a, b` (an uploaded
 * file by the name it had), and an uploaded image as a thumbnail. */
export function attachedNote(files) {
  const note = el("div", { class: "note attached" }, "attached: ");
  const thumbs = [];
  files.forEach((path, i) => {
    if (i) note.append(", ");
    const up = String(path).match(UPLOADED);
    note.append(el("span", { class: "file", title: path }, up ? up[3] : path));
    if (up && /\.(png|jpe?g|gif|webp)$/i.test(up[3])) {
      const src = `/api/sessions/${encodeURIComponent(up[1])}/attachments/${encodeURIComponent(up[2])}`;
      thumbs.push(el("a", { href: src, target: "_blank", rel: "noopener" }, el("img", { class: "thumb", src, alt: up[3] })));
    }
  });
  if (thumbs.length) note.append(el("div", { class: "thumbs" }, ...thumbs));
  return note;
}

/** The images a tool's result carried, as thumbnails: `attachments` from a live
 * `tool_finished` (data: URLs), or a stored call's count (fetched from the server). */
export function resultImages(callId, attachments) {
  let sources = [];
  if (Array.isArray(attachments)) {
    sources = attachments.filter((a) => IMAGE_TYPES.includes(a?.mime) && String(a.url).startsWith("data:")).map((a) => a.url);
  } else if (attachments > 0) {
    const session = new URLSearchParams(location.search).get("session");
    if (!session) return null;
    for (let i = 0; i < attachments; i++) {
      sources.push(`/api/sessions/${encodeURIComponent(session)}/calls/${encodeURIComponent(callId)}/attachments/${i}`);
    }
  }
  if (!sources.length) return null;
  return el("div", { class: "thumbs" }, ...sources.map((src) => el("img", { class: "thumb", src, alt: "attached image" })));
}
