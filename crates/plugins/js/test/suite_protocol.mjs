// suite_protocol.mjs — protocol tests run against a real host process for one runtime
// (called from bun.test.mjs and node.test.mjs). Covers: initialize, result normalisation, the
// JS ctx (metadata, ask, recordChange, lazy messages), concurrency, abort, printing plugins,
// hooks (Podcode and opencode formats), the client stub, load errors (syntax error, import-time
// throw, missing package), reload of a changed file, and survival after plugin errors.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { writeFileSync } from "node:fs";
import {
  HostClient, INPUT, ensureFixtureDeps, execute, fixture, load, makeHostDir, newCallId, rejection,
  tempPluginDir, writePlugin,
} from "./harness.mjs";

export function protocolSuite(runtime, skip) {
  describe(`plugin host protocol on ${runtime}`, { skip }, () => {
    let client;
    const RESULTS = fixture(".podcode/plugins/results.ts");

    before(async () => {
      ensureFixtureDeps();
      client = new HostClient(runtime, makeHostDir());
      await load(client, RESULTS, "podcode", { results: { greeting: "hello from config" }, other: { greeting: "no" } });
    });
    after(async () => {
      await client?.close();
    });

    test("initialize names the runtime", async () => {
      // As Rust does: the host then works in the session directory.
      const r = await client.request("initialize", { protocolVersion: 1, hostDir: client.hostDir, directory: INPUT.directory });
      assert.equal(r.runtime, runtime);
      assert.match(r.version, /^\d+\.\d+\.\d+/);
      assert.match((await rejection(client.request("initialize", { protocolVersion: 2 }))).message, /unsupported plugin host protocol version 2/);
    });

    test("manifest fields: truncation, idempotent, timeout", async () => {
      const r = await load(client, RESULTS, "podcode", { results: { greeting: "hello from config" }, other: { greeting: "no" } });
      const tail = r.tools.find((t) => t.id === "tail_tool");
      assert.deepEqual(tail, {
        id: "tail_tool", description: "fixture tool tail_tool",
        parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: {} },
        truncation: "tail", idempotent: true, timeout: 1234,
      });
      const n = r.tools.find((t) => t.id === "ret_number");
      assert.equal(n.truncation, "head");
      assert.equal(n.idempotent, false);
      assert.equal("timeout" in n, false);
      assert.deepEqual(r.warnings, []);
      assert.equal(r.pluginId, "results");
      assert.equal(r.format, "podcode");
    });

    test("format \"plugin\": the file's shape decides podcode vs opencode-plugin", async () => {
      const podcode = await load(client, fixture(".podcode/plugins/hooks.ts"), "plugin");
      assert.equal(podcode.format, "podcode");
      assert.equal(podcode.pluginId, "hooks-demo");
      const opencode = await load(client, fixture(".opencode/plugins/my-tools.ts"), "plugin");
      assert.equal(opencode.format, "opencode-plugin");
      assert.equal(opencode.pluginId, null);
      assert.deepEqual(opencode.tools.map((t) => t.id), ["greet", "calculate"]);
      const tools = await load(client, fixture(".opencode/tools/math.ts"), "opencode-tools");
      assert.deepEqual([tools.format, tools.pluginId], ["opencode-tools", null]);
    });

    test("results are normalised", async () => {
      const out = async (tool) => execute(client, RESULTS, tool);
      assert.deepEqual(await out("ret_number"), { output: "42" });
      assert.deepEqual(await out("ret_bool"), { output: "true" });
      assert.deepEqual(await out("ret_undefined"), { output: "" });
      assert.deepEqual(await out("ret_null"), { output: "" });
      assert.deepEqual(await out("ret_object"), { output: JSON.stringify({ a: 1, b: [1, 2] }, null, 2) });
      assert.deepEqual(await out("ret_array"), { output: JSON.stringify([1, "x"], null, 2) });
      assert.deepEqual(await out("ret_string"), { output: "hello from config" });
      assert.deepEqual(await out("ret_shaped"), {
        title: "short label", output: "the text the model reads", metadata: { anything: "for the UI" },
        attachments: [{ mime: "image/png", url: "data:image/png;base64,AAAA" }],
      });
    });

    test("invalid results and throws are errors with the model-facing message", async () => {
      let e = await rejection(execute(client, RESULTS, "bad_output"));
      assert.equal(e.message, "the tool returned an invalid result: output must be a string, got number");
      e = await rejection(execute(client, RESULTS, "bad_attachments"));
      assert.equal(e.message, "the tool returned an invalid result: attachments[0].url must be a string, got undefined");
      e = await rejection(execute(client, RESULTS, "bad_attachments_type"));
      assert.equal(e.message, "the tool returned an invalid result: attachments must be an array, got string");
      e = await rejection(execute(client, RESULTS, "throws"));
      assert.equal(e.code, -32000);
      assert.equal(e.message, "boom from tool");
      assert.equal(e.data.file, RESULTS);
      assert.match(e.data.stack, /boom from tool/);
      assert.equal(typeof e.data.line, "number");
      e = await rejection(execute(client, RESULTS, "throws_string"));
      assert.equal(e.message, "a plain string");
    });

    test("the JS ctx: identity, metadata, recordChange, lazy cached messages", async () => {
      const callId = newCallId();
      let messageReads = 0;
      client.handlers["ctx.messages"] = (params) => {
        messageReads++;
        assert.equal(params.callId, callId);
        return { messages: [{ role: "user", text: "hi" }] };
      };
      const r = await execute(client, RESULTS, "ctx_echo", {}, { callId, ctx: { parentID: "ses_0", rootID: "ses_root" } });
      const echoed = JSON.parse(r.output);
      assert.deepEqual(echoed, {
        sessionID: "ses_1", messageID: "msg_1", callID: callId, parentID: "ses_0", rootID: "ses_root",
        agent: "build", mainCwd: INPUT.directory, directory: INPUT.directory, worktree: INPUT.worktree,
        aborted: false, sameMessagesPromise: true, messages: [{ role: "user", text: "hi" }], spreadHasMessages: false,
      });
      assert.equal(messageReads, 1);
      const notes = client.notificationsFor(callId);
      assert.deepEqual(notes.map((n) => n.method), ["ctx.metadata", "ctx.recordChange"]);
      assert.deepEqual(notes[0].params, { callId, title: "working", metadata: { step: 1 } });
      assert.deepEqual(notes[1].params, { callId, file: "/tmp/x.txt", op: "create", oldContent: null, newContent: "hello" });
      const req = client.requests.find((f) => f.method === "ctx.messages" && f.params.callId === callId);
      assert.match(req.id, /^js-\d+$/);
    });

    test("ctx.ask resolves, and a rejection is thrown inside the tool", async () => {
      const seen = [];
      client.handlers["ctx.ask"] = (params) => {
        seen.push(params);
        return {};
      };
      const callId = newCallId();
      assert.deepEqual(await execute(client, RESULTS, "ask_then", {}, { callId }), { output: "granted" });
      assert.deepEqual(seen, [{ callId, permission: "deploy", patterns: ["prod"], always: ["prod"], metadata: { why: "test" } }]);
      client.handlers["ctx.ask"] = () => {
        throw new Error("the user rejected deploy on prod");
      };
      const e = await rejection(execute(client, RESULTS, "ask_then"));
      assert.equal(e.message, "the user rejected deploy on prod");
      client.handlers["ctx.ask"] = () => ({});
    });

    test("calls run concurrently", async () => {
      const order = [];
      // The slow call's lead is far larger than any gap a busy machine leaves between the two.
      const slow = execute(client, RESULTS, "slow", { ms: 3000, label: "slow" }).then((r) => order.push(r.output));
      const fast = execute(client, RESULTS, "slow", { ms: 5, label: "fast" }).then((r) => order.push(r.output));
      await Promise.all([slow, fast]);
      assert.deepEqual(order, ["fast", "slow"]);
    });

    test("abort fires the call's AbortSignal", async () => {
      const callId = newCallId();
      const p = execute(client, RESULTS, "wait_abort", {}, { callId });
      await new Promise((r) => setTimeout(r, 50));
      client.notify("abort", { callId });
      assert.deepEqual(await p, { output: "aborted: true" });
    });

    test("console.log and stdout writes in a plugin do not corrupt frames", async () => {
      assert.deepEqual(await execute(client, RESULTS, "noisy"), { output: "quiet result" });
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(client.badLines, []);
      assert.match(client.stderr, /noise from console\.log/);
      assert.match(client.stderr, /noise from console\.info/);
      assert.match(client.stderr, /raw stdout write/);
    });

    test("hooks: before mutates args, after mutates output, permission.ask, shell.env, throw", async () => {
      const HOOKS = fixture(".podcode/plugins/hooks.ts");
      const r = await load(client, HOOKS, "podcode");
      assert.deepEqual(r.tools, []);
      assert.deepEqual(r.hooks.sort(), ["permission.ask", "shell.env", "tool.execute.after", "tool.execute.before"]);
      const hook = (name, input, output) => client.request("hook", { path: HOOKS, name, input, output });
      assert.deepEqual(await hook("tool.execute.before", { tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "ls" } }),
        { output: { args: { command: "ls", extra: "added by before", count: 1 } } });
      assert.deepEqual(await hook("tool.execute.after", { tool: "bash", sessionID: "s", callID: "c" }, { title: "t", output: "done", metadata: {} }),
        { output: { title: "after bash", output: "done (checked)", metadata: { hooked: true } } });
      assert.deepEqual((await hook("permission.ask", { tool: "read", permission: "read", patterns: ["*"], metadata: {} }, { status: "ask" })).output, { status: "allow" });
      assert.deepEqual((await hook("permission.ask", { tool: "bash", permission: "bash", patterns: ["rm"], metadata: {} }, { status: "ask" })).output, { status: "deny" });
      assert.deepEqual((await hook("shell.env", {}, { env: { A: "1" } })).output, { env: { A: "1", PODCODE_HOOKED: "1" } });
      assert.deepEqual((await hook("chat.params", {}, { temperature: 1 })).output, { temperature: 1 });
      const e = await rejection(hook("tool.execute.before", { tool: "blocked", sessionID: "s", callID: "c" }, { args: {} }));
      assert.equal(e.message, "blocked by the hooks-demo policy");
    });

    test("opencode plugin: .env guard blocks by throwing; the client logs and rejects what it does not offer", async () => {
      const GUARD = fixture(".opencode/plugins/env-guard.ts");
      const r = await load(client, GUARD, "opencode-plugin");
      assert.deepEqual(r.tools.map((t) => t.id).sort(), ["plugin_input", "use_client"]);
      assert.deepEqual(r.hooks, ["tool.execute.before"]);
      const hook = (args) => client.request("hook", { path: GUARD, name: "tool.execute.before", input: { tool: "read", sessionID: "s", callID: "c" }, output: { args } });
      assert.equal((await rejection(hook({ filePath: "/w/.env" }))).message, "Do not read .env files");
      assert.deepEqual(await hook({ filePath: "/w/src/main.rs" }), { output: { args: { filePath: "/w/src/main.rs" } } });
      const e = await rejection(execute(client, GUARD, "use_client"));
      assert.equal(e.message, "client.session.revert is not supported in Podcode (it offers client.app.log, client.tui.showToast, client.auth.set and client.session.list/get/messages/status/update/prompt/command)");
      const info = JSON.parse((await execute(client, GUARD, "plugin_input")).output);
      // opencode's PluginInput keys, in its order; the host works in the session directory.
      assert.deepEqual(info, {
        keys: ["client", "project", "worktree", "directory", "experimental_workspace", "serverUrl", "$"],
        projectKeys: ["id", "worktree", "vcs", "sandboxes", "time"],
        id: INPUT.project.id,
        projectWorktree: INPUT.worktree,
        directory: INPUT.directory,
        worktree: INPUT.worktree,
        serverUrl: "http://localhost:4096/",
        register: "function",
        cwdAtLoad: INPUT.directory,
        cwd: INPUT.directory,
        pwd: runtime === "bun" ? INPUT.directory : null,
      });
    });

    test("hooks names every hook a plugin defines, the object-valued auth and provider too", async () => {
      const dir = tempPluginDir();
      const file = writePlugin(dir, "mixed.mjs", [
        "export const Mixed = async () => ({",
        "  'tool.execute.before': async () => {},",
        "  'experimental.text.complete': async () => {},",
        "  auth: { provider: 'example', methods: [] },",
        "  provider: { id: 'example' },",
        "  tool: {},",
        "})",
      ].join("\n"));
      const r = await load(client, file, "opencode-plugin");
      assert.deepEqual(r.hooks.sort(), ["auth", "experimental.text.complete", "provider", "tool.execute.before"]);
    });

    test("auth: described at load, a login step by step, the loader's fetch streams its body", async () => {
      const { createServer } = await import("node:http");
      const server = createServer((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream", "x-auth": req.headers.authorization ?? "" });
        res.write("data: one\n\n");
        setTimeout(() => res.end("data: two\n\n"), 20);
      });
      await new Promise((r) => server.listen(0, "127.0.0.1", r));
      const url = `http://127.0.0.1:${server.address().port}/v1/chat/completions`;
      const dir = tempPluginDir();
      const file = writePlugin(dir, "signer.mjs", [
        "export const Signer = async ({ client }) => ({",
        "  auth: {",
        "    provider: 'acme',",
        "    async loader(getAuth, info) {",
        "      const auth = await getAuth()",
        "      return { apiKey: '', baseURL: 'http://x/' + info.id, headers: { a: '1' }, fetch: (u, init) => {",
        "        const headers = new Headers(init.headers); headers.set('authorization', 'Bearer ' + auth.access)",
        "        return fetch(u, { ...init, headers })",
        "      } }",
        "    },",
        "    methods: [",
        "      { type: 'oauth', label: 'Acme', prompts: [",
        "          { type: 'select', key: 'region', message: 'Region', options: [{ label: 'EU', value: 'eu' }, { label: 'US', value: 'us', hint: 'default' }] },",
        "          { type: 'text', key: 'org', message: 'Org', when: { key: 'region', op: 'eq', value: 'eu' }, validate: (v) => v ? undefined : 'required' },",
        "        ],",
        "        async authorize(inputs) { return { url: 'https://a/' + inputs.region, instructions: 'go', method: 'auto', callback: async () => ({ type: 'success', refresh: 'r', access: 'a', expires: 1 }) } } },",
        "      { type: 'api', label: 'Key' },",
        "    ],",
        "  },",
        "})",
      ].join("\n"));
      const r = await load(client, file, "opencode-plugin");
      assert.deepEqual(r.auth, [{ provider: "acme", loader: true, methods: [
        { type: "oauth", label: "Acme", prompts: [
          { type: "select", key: "region", message: "Region", options: [{ label: "EU", value: "eu" }, { label: "US", value: "us", hint: "default" }] },
          { type: "text", key: "org", message: "Org" },
        ] },
        { type: "api", label: "Key", prompts: [] },
      ] }]);
      const step = (method, inputs) => client.request("auth.step", { path: file, provider: "acme", method, inputs });
      assert.equal((await step(0, {})).prompt.key, "region");
      assert.deepEqual(await step(0, { region: "eu" }), { prompt: { type: "text", key: "org", message: "Org" } });
      assert.equal((await step(0, { region: "eu", org: "" })).error, "required");
      // `when` leaves the org out for the US.
      const oauth = (await step(0, { region: "us" })).oauth;
      assert.deepEqual({ ...oauth, id: undefined }, { id: undefined, url: "https://a/us", instructions: "go", method: "auto" });
      assert.deepEqual(await client.request("auth.callback", { id: oauth.id }), { result: { type: "success", refresh: "r", access: "a", expires: 1 } });
      assert.deepEqual(await step(1, {}), { result: { type: "key" } });

      client.handlers["client.auth"] = ({ method, provider }) => ({ data: method === "get" && provider === "acme" ? { type: "oauth", access: "tok" } : null });
      const loaded = await client.request("auth.load", { path: file, provider: "acme", info: { id: "acme" } });
      assert.deepEqual(loaded, { options: { apiKey: "", baseURL: "http://x/acme", headers: { a: "1" } }, fetch: true });
      const head = await client.request("auth.fetch", { path: file, provider: "acme", fetchId: "f1", url, headers: { "content-type": "application/json" }, body: "{}" });
      assert.equal(head.status, 200);
      assert.ok(head.headers.some(([k, v]) => k === "x-auth" && v === "Bearer tok"), JSON.stringify(head.headers));
      const deadline = Date.now() + 10000;
      const body = () => client.notifications.filter((n) => n.method === "auth.body" && n.params.fetchId === "f1").map((n) => n.params);
      while (!body().some((p) => p.end) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal(body().filter((p) => p.data).map((p) => p.data).join(""), "data: one\n\ndata: two\n\n");
      assert.deepEqual(body().at(-1), { fetchId: "f1", end: true });
      server.close();
    });

    test("a syntax error is a load error with its line (.mjs and .ts)", async () => {
      const dir = tempPluginDir();
      const mjs = writePlugin(dir, "broken.mjs", "export const a = 1\nexport const b = {\n  x: 1,,\n}\n");
      let e = await rejection(load(client, mjs, "opencode-tools"));
      assert.equal(e.data.file, mjs);
      assert.equal(e.data.line, 3);
      assert.match(e.message, /line 3/);
      const ts = writePlugin(dir, "broken.ts", "const a: number = 1\nexport const b = {\n  x: a,,\n}\n");
      e = await rejection(load(client, ts, "opencode-tools"));
      assert.equal(e.data.file, ts);
      assert.equal(e.data.line, 3);
      assert.match(e.message, /line 3/);
      // An error the type stripper itself finds (Node) / Bun's parser finds.
      const typed = writePlugin(dir, "typed-broken.ts", "export const a = 1\nconst x: = 1\n");
      e = await rejection(load(client, typed, "opencode-tools"));
      assert.equal(e.data.file, typed);
      assert.equal(e.data.line, 2);
      assert.match(e.message, /^syntax error in .*typed-broken\.ts at line 2, column \d+: /);
    });

    test("a SyntaxError thrown by running code is not mistaken for a syntax error in the file", async () => {
      const dir = tempPluginDir();
      const p = writePlugin(dir, "parses.mjs", "export default {\n  id: \"parses\",\n  server() {\n    const hooks = JSON.parse(\"{not json\")\n    return hooks\n  },\n}\n");
      const e = await rejection(load(client, p, "podcode"));
      assert.doesNotMatch(e.message, /^syntax error/);
      assert.match(e.message, /JSON|Unexpected|token/i);
      // Bun's stack for an error JSON.parse raises natively stops at the parser: no line then.
      if (runtime === "node" || e.data.line !== undefined) assert.equal(e.data.line, 4);
      assert.equal(e.data.pluginId, "parses");
    });

    test("a throw at import time is a load error with its message and line", async () => {
      const dir = tempPluginDir();
      const p = writePlugin(dir, "throws.mjs", "export const x = 1\nthrow new Error(\"top-level boom\")\n");
      const e = await rejection(load(client, p, "opencode-tools"));
      assert.equal(e.message, "top-level boom");
      assert.equal(e.data.file, p);
      assert.equal(e.data.line, 2);
    });

    test("a missing package is a load error naming it and where it was looked up", async () => {
      // A real package name: Bun would auto-install it if bunfig.toml did not forbid that.
      const dir = tempPluginDir();
      const p = writePlugin(dir, "needs-pkg.mjs", "import { tool } from \"@opencode-ai/plugin\"\nimport isOdd from \"is-odd\"\nexport default tool({ description: \"d\", args: {}, execute: () => String(isOdd(3)) })\n");
      const e = await rejection(load(client, p, "opencode-tools"));
      assert.match(e.message, /cannot find package 'is-odd' imported from /);
      assert.ok(e.message.includes(p), e.message);
      assert.match(e.message, /npm install is-odd/);
      assert.equal(e.data.file, p);
      assert.equal(e.data.line, 2);
    });

    test("a failed load still reports what it looked for", async () => {
      const dir = tempPluginDir();
      writePlugin(dir, "lib/helper.mjs", "export const h = 1\n");
      const p = writePlugin(dir, "needs-pkg2.mjs", "import { h } from \"./lib/helper.mjs\"\nimport x from \"podcode-absent-pkg\"\nexport const t = h + x\n");
      const e = await rejection(load(client, p, "opencode-tools"));
      assert.deepEqual(e.data.dependencies, { files: [p, `${dir}/lib/helper.mjs`], packages: [] });
    });

    test("a long output is streamed as output chunks, never splitting a surrogate pair", async () => {
      const dir = tempPluginDir();
      // 300k code units, with a surrogate pair straddling the first 256 Ki boundary.
      const p = writePlugin(dir, "long.mjs", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"d\", args: {}, execute: () => \"a\".repeat(262143) + \"😀\" + \"b\".repeat(37855) })\n");
      await load(client, p, "opencode-tools");
      const callId = newCallId();
      const r = await execute(client, p, "long", {}, { callId });
      assert.deepEqual(r, { output: "" });
      const chunks = client.notifications.filter((n) => n.method === "output" && n.params.callId === callId).map((n) => n.params.data);
      assert.equal(chunks.length, 2);
      assert.equal(chunks[0].length, 262143, "the pair moved to the next chunk");
      assert.equal(chunks.join(""), "a".repeat(262143) + "😀" + "b".repeat(37855));
    });

    test("a string cut mid-emoji leaves as U+FFFD in place of each broken half", async () => {
      const dir = tempPluginDir();
      const p = writePlugin(dir, "cut.mjs", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"d\", args: {}, execute: async (_a, ctx) => { ctx.metadata({ title: \"t \\ud83d\" }); return \"cut \\ud83d, \\ude00 and 😀\" } })\n");
      await load(client, p, "opencode-tools");
      const callId = newCallId();
      const r = await execute(client, p, "cut", {}, { callId });
      assert.deepEqual(r, { output: "cut \ufffd, \ufffd and 😀" });
      const meta = client.notifications.find((n) => n.method === "ctx.metadata" && n.params.callId === callId);
      assert.equal(meta?.params.title, "t \ufffd");
    });

    test("a .js tool (ESM) importing a CommonJS helper beside it", async () => {
      const dir = tempPluginDir();
      writePlugin(dir, "helper.js", "module.exports = function (s) { return `cjs:${s}` }\n");
      const p = writePlugin(dir, "esm-tool.js", [
        "import { tool } from \"@opencode-ai/plugin\"",
        "import helper from \"./helper.js\"",
        "export default tool({ description: \"js tool\", args: { a: tool.schema.string() }, execute: async (x) => helper(x.a) })",
      ].join("\n"));
      const r = await load(client, p, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => t.id), ["esm-tool"]);
      assert.deepEqual(await execute(client, p, "esm-tool", { a: "q" }), { output: "cjs:q" });
    });

    test("the Bun global at import time: works on Bun, a clear needs-Bun load error on Node", async () => {
      const dir = tempPluginDir();
      const p = writePlugin(dir, "bun-version.mjs", "const v = Bun.version\nexport const ver = { description: \"bun version\", args: {}, execute: () => v }\n");
      if (runtime === "bun") {
        await load(client, p, "opencode-tools");
        assert.match((await execute(client, p, "bun-version_ver")).output, /^\d+\.\d+\.\d+/);
      } else {
        const e = await rejection(load(client, p, "opencode-tools"));
        assert.equal(e.message, `${p} needs Bun (it uses Bun.version); install it with npm install -g bun`);
        assert.equal(e.data.line, 1);
      }
    });

    test("a changed file reloads with the new code", async () => {
      const dir = tempPluginDir();
      const src = (v) => `import { tool } from "@opencode-ai/plugin"\nexport default tool({ description: "version ${v}", args: {}, execute: async () => "v${v}" })\n`;
      const p = writePlugin(dir, "reload.ts", src(1));
      let r = await load(client, p, "opencode-tools");
      assert.equal(r.tools[0].description, "version 1");
      assert.deepEqual(await execute(client, p, "reload"), { output: "v1" });
      writeFileSync(p, src(2));
      r = await load(client, p, "opencode-tools");
      assert.equal(r.tools[0].description, "version 2");
      assert.deepEqual(await execute(client, p, "reload"), { output: "v2" });
    });

    test("stray rejections and timer throws in plugins do not end the host", async () => {
      const dir = tempPluginDir();
      const p = writePlugin(dir, "unruly.mjs", [
        "export const unruly = { description: \"misbehaves\", args: {}, async execute() {",
        "  Promise.reject(new Error(\"stray rejection\"))",
        "  setTimeout(() => { throw new Error(\"timer throw\") }, 1)",
        "  return \"returned anyway\"",
        "} }",
      ].join("\n"));
      await load(client, p, "opencode-tools");
      assert.deepEqual(await execute(client, p, "unruly_unruly"), { output: "returned anyway" });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await client.request("initialize", { protocolVersion: 1 })).runtime, runtime);
      assert.match(client.stderr, /stray rejection/);
    });

    test("unknown tools, paths and methods are errors", async () => {
      assert.match((await rejection(execute(client, RESULTS, "nope"))).message, /has no tool nope/);
      assert.match((await rejection(execute(client, "/nowhere/x.ts", "x"))).message, /is not loaded/);
      assert.equal((await rejection(client.request("frobnicate", {}))).code, -32601);
      assert.match((await rejection(load(client, RESULTS, "weird"))).message, /unknown plugin format/);
    });

    test("shutdown answers and exits 0", async () => {
      const c = new HostClient(runtime, client.hostDir);
      assert.deepEqual(await c.request("shutdown", {}), {});
      assert.deepEqual(await c.exited, { code: 0, signal: null });
    });
  });
}
