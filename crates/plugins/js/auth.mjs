// auth.mjs — opencode's `auth` hook: a plugin that signs Podcode in to a model provider.
//
// Owns: what the load result says about each `auth` object (`describeAuth`: provider, whether
// it has a loader, its methods' labels and the data of their prompts), and the host methods
// that run it for Rust:
// - `auth.load {path, provider, info}`: calls `loader(getAuth, info)` (getAuth asks Rust for
//   the stored credentials, request `client.auth`), returns the options' JSON part and whether
//   they carry a `fetch`, which is kept here for `auth.fetch`;
// - `auth.fetch {path, provider, fetchId, url, method, headers, body}`: a model request sent
//   through that `fetch`; answers `{status, headers}` once the response head arrives, then
//   streams the body as notifications `auth.body {fetchId, data}` and ends with
//   `auth.body {fetchId, end: true}` or `{fetchId, error}`; `abort {callId: fetchId}` cancels;
// - `auth.step {path, provider, method, inputs}`: the login's next prompt (its `when` and
//   `condition` applied, an answer its `validate` refuses asked again with the reason), or,
//   once every prompt is answered, the method's `authorize(inputs)`: an API key result, or
//   an OAuth `{id, url, instructions, method}` whose `callback` is kept for
//   `auth.callback {id, code}`.

import { notify, request } from "./io.mjs";
import { HostError, registry } from "./plugins.mjs";

const fetchers = new Map(); // `${path}\0${provider}` → fetch from the loader's options
const callbacks = new Map(); // oauth id → callback
let nextOauth = 1;

/** The `auth` objects of a file's hook sets, as the load result reports them. */
export function describeAuth(hookSets, path, warnings) {
  const out = [];
  for (const hooks of hookSets) {
    const auth = hooks?.auth;
    if (auth === undefined || auth === null) continue;
    if (typeof auth !== "object" || typeof auth.provider !== "string" || auth.provider === "") {
      warnings.push(`${path}: hooks.auth needs a provider name (auth.provider); it is ignored`);
      continue;
    }
    const methods = Array.isArray(auth.methods) ? auth.methods : [];
    out.push({
      provider: auth.provider,
      loader: typeof auth.loader === "function",
      methods: methods.map((m) => ({
        type: m?.type === "oauth" ? "oauth" : "api",
        label: String(m?.label ?? (m?.type === "oauth" ? "OAuth" : "API key")),
        prompts: (Array.isArray(m?.prompts) ? m.prompts : []).map(promptData),
      })),
    });
  }
  return out;
}

function promptData(p) {
  const data = { type: p?.type === "select" ? "select" : "text", key: String(p?.key ?? ""), message: String(p?.message ?? p?.key ?? "") };
  if (typeof p?.placeholder === "string") data.placeholder = p.placeholder;
  if (Array.isArray(p?.options)) {
    data.options = p.options.map((o) => ({ label: String(o?.label ?? o?.value ?? ""), value: String(o?.value ?? ""), ...(o?.hint ? { hint: String(o.hint) } : {}) }));
  }
  return data;
}

function authOf(path, provider) {
  const entry = registry.get(path);
  if (!entry) throw new HostError(`${path} is not loaded`, { file: path });
  const auth = entry.hookSets.map((h) => h?.auth).find((a) => a && typeof a === "object" && a.provider === provider);
  if (!auth) throw new HostError(`${path} has no auth hook for ${provider}`, { file: path });
  return auth;
}

/** What the stored credentials are, asked of Rust each time (a refreshed token is seen). */
async function storedAuth(provider) {
  const reply = await request("client.auth", { method: "get", provider });
  return reply?.data ?? undefined;
}

function jsonPart(value) {
  const out = {};
  for (const [k, v] of Object.entries(value ?? {})) {
    if (typeof v === "function" || v === undefined) continue;
    try {
      out[k] = JSON.parse(JSON.stringify(v));
    } catch {
      // not serialisable (a client object, a class instance): stays in the host
    }
  }
  return out;
}

export async function authLoad({ path, provider, info } = {}) {
  const auth = authOf(path, provider);
  const key = `${path}\0${provider}`;
  fetchers.delete(key);
  if (typeof auth.loader !== "function") return { options: {}, fetch: false };
  const options = (await auth.loader(() => storedAuth(provider), info ?? {})) ?? {};
  if (typeof options.fetch === "function") fetchers.set(key, options.fetch);
  return { options: jsonPart(options), fetch: typeof options.fetch === "function" };
}

export async function authFetch({ path, provider, info, fetchId, url, method, headers, body } = {}, controller, done) {
  // A host that restarted (a crash, a reload) runs the loader again before its first fetch.
  if (!fetchers.has(`${path}\0${provider}`)) await authLoad({ path, provider, info });
  const fetchFn = fetchers.get(`${path}\0${provider}`);
  if (!fetchFn) throw new HostError(`the auth loader of ${path} gave no fetch for ${provider}`, { file: path });
  const response = await fetchFn(url, { method: method ?? "POST", headers: headers ?? {}, body, signal: controller.signal });
  if (!response || typeof response.status !== "number") {
    throw new HostError(`the auth fetch of ${path} did not return a Response`, { file: path });
  }
  const head = { status: response.status, headers: [...(response.headers?.entries?.() ?? [])] };
  // The body is sent once the head's answer is on its way (frames keep their order).
  queueMicrotask(() => pumpBody(fetchId, response, controller).finally(done));
  return head;
}

async function pumpBody(fetchId, response, controller) {
  try {
    if (response.body && typeof response.body.getReader === "function") {
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const data = decoder.decode(value, { stream: true });
        if (data) notify("auth.body", { fetchId, data });
      }
      const rest = decoder.decode();
      if (rest) notify("auth.body", { fetchId, data: rest });
    } else {
      const data = await response.text();
      if (data) notify("auth.body", { fetchId, data });
    }
    notify("auth.body", { fetchId, end: true });
  } catch (err) {
    const error = controller.signal.aborted ? "aborted" : String(err?.message ?? err);
    notify("auth.body", { fetchId, error });
  }
}

function applies(prompt, inputs) {
  if (prompt?.when && typeof prompt.when === "object") {
    const have = inputs[prompt.when.key];
    if (have === undefined) return false;
    const equal = have === prompt.when.value;
    if (prompt.when.op === "eq" ? !equal : equal) return false;
  }
  if (typeof prompt?.condition === "function" && !prompt.condition(inputs)) return false;
  return true;
}

export async function authStep({ path, provider, method, inputs } = {}) {
  const auth = authOf(path, provider);
  const m = Array.isArray(auth.methods) ? auth.methods[method] : undefined;
  if (!m) throw new HostError(`${path}: ${provider} has no login method ${method}`, { file: path });
  const given = inputs && typeof inputs === "object" ? { ...inputs } : {};
  const answered = {};
  for (const prompt of Array.isArray(m.prompts) ? m.prompts : []) {
    if (!applies(prompt, answered)) continue;
    const key = String(prompt.key ?? "");
    if (!(key in given)) return { prompt: promptData(prompt) };
    if (typeof prompt.validate === "function") {
      const error = prompt.validate(String(given[key] ?? ""));
      if (typeof error === "string" && error !== "") return { prompt: promptData(prompt), error };
    }
    answered[key] = given[key];
  }
  if (m.type === "oauth") {
    if (typeof m.authorize !== "function") throw new HostError(`${path}: the ${m.label} login has no authorize()`, { file: path });
    const started = await m.authorize(answered);
    const id = String(nextOauth++);
    callbacks.set(id, started?.callback);
    return { oauth: { id, url: String(started?.url ?? ""), instructions: String(started?.instructions ?? ""), method: started?.method === "code" ? "code" : "auto" } };
  }
  if (typeof m.authorize !== "function") return { result: { type: "key" } };
  return { result: jsonPart(await m.authorize(answered)) };
}

export async function authCallback({ id, code } = {}) {
  const callback = callbacks.get(String(id));
  callbacks.delete(String(id));
  if (typeof callback !== "function") throw new HostError(`no login is waiting for its callback (${id})`, {});
  const result = code === undefined || code === null ? await callback() : await callback(String(code));
  return { result: jsonPart(result) };
}
