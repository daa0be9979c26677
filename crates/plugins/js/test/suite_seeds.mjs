// suite_seeds.mjs — every code example of the two documentation pages (shared/seeds) run
// unchanged as a fixture through a real host process for one runtime. Bun-only examples
// (bun:sqlite, Bun.$, Bun.file) run on Bun and give the clear "needs Bun" error on Node.
// Examples that reach the internet or docker fail cleanly as a tool error.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import {
  FIXTURES, HostClient, ensureFixtureDeps, execute, fixture, load, makeHostDir, newCallId, rejection, tempDir, tempPluginDir,
} from "./harness.mjs";

const NEEDS_BUN = (file, what) => new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} needs Bun \\(it uses ${what.replace(/[.$]/g, "\\$&")}\\); install it with npm install -g bun$`);

export function seedSuite(runtime, skip) {
  describe(`documentation examples on ${runtime}`, { skip }, () => {
    let client;
    let server;
    let endpoint;

    before(async () => {
      ensureFixtureDeps();
      client = new HostClient(runtime, makeHostDir());
      server = createServer((req, res) => {
        const m = /^\/status\/([^/]+)$/.exec(req.url);
        if (m && m[1] === "api") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ health: "healthy", release: "v1.2.3", deployedAt: "2025-01-02T03:04:05Z" }));
        } else {
          res.writeHead(404);
          res.end("not found");
        }
      });
      await new Promise((r) => server.listen(0, "127.0.0.1", r));
      endpoint = `http://127.0.0.1:${server.address().port}`;
    });
    after(async () => {
      await client?.close();
      server?.close();
    });

    const DEPLOY_MANIFEST = {
      id: "deploy_status",
      description: "Check the current deployment status of a service. Returns the live release tag, health, and the time of the last deploy.",
      parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { service: { type: "string", description: "Service name, e.g. 'api' or 'web'." } }, required: ["service"] },
      truncation: "head",
      idempotent: true,
    };

    test("deploy-status (Podcode plugin, zod v3) against a local HTTP server, as .ts and .mjs", async () => {
      const ts = fixture(".podcode/plugins/deploy-status.ts");
      const mjs = join(tempPluginDir(), "deploy-status.mjs");
      copyFileSync(ts, mjs); // the seed's own file name: the same text is valid JavaScript
      for (const path of [ts, mjs]) {
        const { dependencies, ...r } = await load(client, path, "podcode", { "deploy-status": { endpoint } });
        assert.deepEqual(dependencies.files, [path]);
        assert.deepEqual(dependencies.packages.map((p) => [p.name, p.version]), [["zod", "3.25.76"]]);
        assert.deepEqual(r, { pluginId: "deploy-status", format: "podcode", tools: [DEPLOY_MANIFEST], hooks: [], warnings: [], logs: [] });
        assert.deepEqual(await client.request("validate", { path, tool: "deploy_status", args: { service: "api", junk: 1 } }), { ok: true, args: { service: "api" } });
        assert.deepEqual(await client.request("validate", { path, tool: "deploy_status", args: {} }), { ok: false, issues: [{ path: "service", message: "Required" }] });
        assert.deepEqual(await execute(client, path, "deploy_status", { service: "api" }), {
          title: "api — healthy",
          metadata: { release: "v1.2.3" },
          output: "Service api is healthy on release v1.2.3, deployed 2025-01-02T03:04:05Z.",
        });
        assert.equal((await rejection(execute(client, path, "deploy_status", { service: "web" }))).message, "status 404 for web");
      }
    });

    test("deploy-status without its config: server() throws, a load error with its message", async () => {
      const path = fixture(".podcode/plugins/deploy-status.ts");
      const e = await rejection(load(client, path, "podcode", { "other-plugin": { endpoint: "http://x" } }));
      assert.equal(e.message, "deploy-status: set plugin_config.deploy-status.endpoint");
      assert.equal(e.data.file, path);
      assert.equal(e.data.line, 8);
      assert.equal(e.data.pluginId, "deploy-status");
    });

    test("write example: ctx.ask, then recordChange journaled before the result", async () => {
      const path = fixture(".podcode/plugins/write-file.ts");
      await load(client, path, "podcode");
      const target = join(tempDir("podcode-write-"), "note.txt");
      const asks = [];
      client.handlers["ctx.ask"] = (p) => {
        asks.push(p);
        return {};
      };
      let callId = newCallId();
      assert.deepEqual(await execute(client, path, "write_file", { path: target, body: "hello" }, { callId }),
        { title: "wrote note.txt", output: `Wrote 5 bytes to ${target}.` });
      assert.equal(readFileSync(target, "utf8"), "hello");
      assert.deepEqual(asks, [{ callId, permission: "write", patterns: [target], metadata: { preview: "hello" } }]);
      const change = client.frames.findIndex((f) => f.method === "ctx.recordChange" && f.params.callId === callId);
      const answer = client.frames.findIndex((f) => f.result?.output === `Wrote 5 bytes to ${target}.`);
      assert.ok(change >= 0 && change < answer, "recordChange precedes the result");
      assert.deepEqual(client.frames[change].params, { callId, file: target, op: "create", oldContent: null, newContent: "hello" });
      callId = newCallId();
      await execute(client, path, "write_file", { path: target, body: "hello again" }, { callId });
      assert.deepEqual(client.notificationsFor(callId)[0].params, { callId, file: target, op: "modify", oldContent: "hello", newContent: "hello again" });
      client.handlers["ctx.ask"] = () => {
        throw new Error("permission denied by the user");
      };
      assert.equal((await rejection(execute(client, path, "write_file", { path: target, body: "nope" }))).message, "permission denied by the user");
      assert.equal(readFileSync(target, "utf8"), "hello again");
      client.handlers["ctx.ask"] = () => ({});
    });

    test("database.ts: the file name is the tool id", async () => {
      const path = fixture(".opencode/tools/database.ts");
      const r = await load(client, path, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => t.id), ["database"]);
      assert.deepEqual(r.tools[0].parameters, { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { query: { type: "string", description: "SQL query to execute" } }, required: ["query"] });
      assert.deepEqual(await execute(client, path, "database", { query: "select 1" }), { output: "Executed query: select 1" });
    });

    test("db-query.ts with bun:sqlite returns JSON text (Bun) / needs Bun (Node)", async () => {
      const path = fixture(".opencode/tools/db-query.ts");
      if (runtime === "node") {
        const e = await rejection(load(client, path, "opencode-tools"));
        assert.match(e.message, NEEDS_BUN(path, "bun:sqlite"));
        assert.equal(e.data.file, path);
        return;
      }
      const worktree = tempDir("podcode-db-");
      execFileSync("bun", ["-e", `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(join(worktree, "data.db"))}); db.run("create table t (id integer, name text)"); db.run("insert into t values (1, 'a'), (2, 'b')"); db.close()`]);
      await load(client, path, "opencode-tools");
      const r = await execute(client, path, "db-query", { query: "select * from t order by id" }, { ctx: { worktree } });
      assert.deepEqual(JSON.parse(r.output), [{ id: 1, name: "a" }, { id: 2, name: "b" }]);
      assert.equal(r.output, JSON.stringify([{ id: 1, name: "a" }, { id: 2, name: "b" }], null, 2));
      assert.match((await execute(client, path, "db-query", { query: "select * from missing" }, { ctx: { worktree } })).output, /^Error executing query: /);
    });

    test("math.ts: one tool per export, numbers become text", async () => {
      const path = fixture(".opencode/tools/math.ts");
      const r = await load(client, path, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => t.id), ["math_add", "math_multiply"]);
      assert.equal(r.tools[0].parameters.properties.a.description, "First number");
      assert.deepEqual(await execute(client, path, "math_add", { a: 2, b: 3 }), { output: "5" });
      assert.deepEqual(await execute(client, path, "math_multiply", { a: 2, b: 3 }), { output: "6" });
      assert.deepEqual(await client.request("validate", { path, tool: "math_add", args: { a: "2" } }),
        { ok: false, issues: [{ path: "a", message: "Expected number, received string" }, { path: "b", message: "Required" }] });
    });

    test("python-add.ts runs add.py with Bun.$ (Bun) / needs Bun (Node)", async () => {
      const path = fixture(".opencode/tools/python-add.ts");
      const r = await load(client, path, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => t.id), ["python-add"]);
      if (runtime === "bun") {
        assert.deepEqual(r.warnings, []);
        assert.deepEqual(await execute(client, path, "python-add", { a: 2, b: 40 }), { output: "42" });
      } else {
        assert.match(r.warnings[0], /uses Bun\.\$, which only Bun provides/);
        const e = await rejection(execute(client, path, "python-add", { a: 2, b: 40 }));
        assert.match(e.message, NEEDS_BUN(path, "Bun.$"));
      }
    });

    test("count-lines.ts: default extensions applied by validate; Bun.file (Bun) / needs Bun (Node)", async () => {
      const path = fixture(".opencode/tools/count-lines.ts");
      const r = await load(client, path, "opencode-tools");
      assert.deepEqual(r.tools[0].parameters.properties.extensions, {
        type: "array", items: { type: "string" }, default: [".ts", ".js", ".tsx", ".jsx"], description: "File extensions to include",
      });
      assert.deepEqual(r.tools[0].parameters.required, ["directory"]);
      const dir = tempDir("podcode-count-");
      writeFileSync(join(dir, "a.ts"), "one\ntwo\nthree");
      writeFileSync(join(dir, "b.js"), "x\ny");
      writeFileSync(join(dir, "c.txt"), "ignored\nignored");
      const v = await client.request("validate", { path, tool: "count-lines", args: { directory: dir } });
      assert.deepEqual(v, { ok: true, args: { directory: dir, extensions: [".ts", ".js", ".tsx", ".jsx"] } });
      if (runtime === "bun") {
        assert.deepEqual(await execute(client, path, "count-lines", v.args), { output: "Found 2 files with 5 total lines of code" });
      } else {
        assert.match((await rejection(execute(client, path, "count-lines", v.args))).message, NEEDS_BUN(path, "Bun.file"));
      }
    });

    test("metadata example: live title and metadata updates", async () => {
      const path = fixture(".opencode/tools/metadata.ts");
      await load(client, path, "opencode-tools");
      const callId = newCallId();
      assert.deepEqual(await execute(client, path, "metadata", { path: "data.csv" }, { callId }), { output: "Processed 8 rows" });
      assert.deepEqual(client.notificationsFor(callId).map((n) => n.params), [
        { callId, title: "Processing dataset..." },
        { callId, title: "Dataset processed", metadata: { rowCount: 8 } },
      ]);
    });

    test("cancellation example returns early when aborted", async () => {
      const path = fixture(".opencode/tools/cancellation.ts");
      await load(client, path, "opencode-tools");
      const callId = newCallId();
      const p = execute(client, path, "cancellation", {}, { callId });
      await new Promise((r) => setTimeout(r, 80));
      client.notify("abort", { callId });
      assert.deepEqual(await p, { output: "Task was cancelled" });
    });

    test("project.ts reads the context", async () => {
      const path = fixture(".opencode/tools/project.ts");
      await load(client, path, "opencode-tools");
      assert.deepEqual(await execute(client, path, "project"), { output: `Agent: build, Session: ses_1, Message: msg_1, Directory: ${FIXTURES}, Worktree: ${FIXTURES}` });
    });

    test("github-search and docker-ps fail cleanly as tool errors (no internet, no docker daemon)", async () => {
      const gh = fixture(".opencode/tools/github-search.ts");
      let r = await load(client, gh, "opencode-tools");
      assert.deepEqual(r.tools[0].parameters.properties.limit, { type: "number", default: 5, description: "Number of results" });
      const callId = newCallId();
      const e = await rejection(execute(client, gh, "github-search", { query: "podcode", limit: 5 }, { callId }));
      assert.ok(e.message.length > 0);
      assert.deepEqual(client.notificationsFor(callId)[0].params, { callId, title: 'Searching GitHub for "podcode"...' });
      const docker = fixture(".opencode/tools/docker-ps.ts");
      r = await load(client, docker, "opencode-tools");
      const d = await rejection(execute(client, docker, "docker-ps", { all: false }));
      if (runtime === "node") assert.match(d.message, NEEDS_BUN(docker, "Bun.$"));
      else assert.ok(d.message.length > 0);
    });

    test("my-tools.ts (opencode plugin) registers greet and calculate", async () => {
      const path = fixture(".opencode/plugins/my-tools.ts");
      const r = await load(client, path, "opencode-plugin");
      assert.deepEqual(r.tools.map((t) => t.id), ["greet", "calculate"]);
      assert.deepEqual(r.tools[0].parameters, { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { name: { type: "string", description: "Name to greet" } }, required: ["name"] });
      assert.deepEqual(await execute(client, path, "greet", { name: "Ada" }), { output: "Hello, Ada!" });
      assert.deepEqual(await execute(client, path, "calculate", { expression: "6 * 7" }), { output: "Result: 42" });
      assert.match((await execute(client, path, "calculate", { expression: "6 *" })).output, /^Error: /);
    });

    test("plain zod object (no tool() helper) and the validation examples", async () => {
      const plain = fixture(".opencode/tools/plain-zod.ts");
      let r = await load(client, plain, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => [t.id, t.parameters]), [["plain-zod", { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { param: { type: "string", description: "Parameter description" } }, required: ["param"] }]]);
      assert.deepEqual(await execute(client, plain, "plain-zod", { param: "x" }), { output: "result" });
      const vi = fixture(".opencode/tools/validate-inputs.ts");
      r = await load(client, vi, "opencode-tools");
      assert.deepEqual(r.tools.map((t) => t.id), ["validate-inputs_contact", "validate-inputs_person"]);
      assert.deepEqual(r.tools[0].parameters.properties, {
        email: { type: "string", format: "email", description: "User email address" },
        age: { type: "number", minimum: 0, maximum: 150, description: "User age" },
        url: { type: "string", format: "uri", description: "Website URL" },
      });
      assert.deepEqual(r.tools[1].parameters.required, ["name", "role"]);
      assert.deepEqual(r.tools[1].parameters.properties.role, { type: "string", enum: ["admin", "user"], description: "The user's role" });
      const v = await client.request("validate", { path: vi, tool: "validate-inputs_contact", args: { email: "nope", age: 200, url: "x" } });
      assert.deepEqual(v.issues.map((i) => i.path), ["email", "age", "url"]);
      assert.deepEqual(await execute(client, vi, "validate-inputs_person", { name: "Ada", role: "admin" }), { output: "Ada (admin)" });
    });

    test("a file that exports no tool is a warning; relative .ts imports work", async () => {
      const none = fixture(".opencode/tools/helpers-only.ts");
      const { dependencies: _, ...noneResult } = await load(client, none, "opencode-tools");
      assert.deepEqual(noneResult, { pluginId: null, format: "opencode-tools", tools: [], hooks: [], warnings: [`${none} exports no tool`], logs: [] });
      const uses = fixture(".opencode/tools/uses-helper.ts");
      const r = await load(client, uses, "opencode-tools");
      // Every helper it imports, transitively and however the specifier is spelled, is a
      // dependency (the Rust side's manifest cache watches them); the shim packages are not.
      assert.deepEqual(
        [...r.dependencies.files].sort(),
        [uses, ...["args", "level", "shout", "wrap"].map((f) => fixture(`.opencode/tools/lib/${f}.ts`))].sort(),
      );
      assert.deepEqual(r.dependencies.packages.map((p) => p.name).filter((n) => n.startsWith("@opencode-ai")), []);
      assert.deepEqual(r.tools[0].parameters.properties.word, { type: "string", description: "The word" });
      assert.deepEqual(await execute(client, uses, "uses-helper", { word: "hello" }), { output: "[2] HELLO!" });
    });
  });
}
