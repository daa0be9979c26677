// suite_opencode_client.mjs — what opencode plugins find in Podcode's host, through a real host
// process: the `client` (logging and toasts during the load come back in the load result,
// feature tests never throw, unoffered calls reject with the pinned text), and a bare
// `import { z } from "zod"` in a folder with no zod gets the host's zod 3 (the seed's
// deploy-status.mjs copied unchanged into an empty plugins folder loads and validates).

import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { HostClient, execute, load, makeHostDir, rejection, tempDir, writePlugin } from "./harness.mjs";

const SEED_DEPLOY_STATUS = new URL("../../tests/fixtures/opencode-projects/deploy-status.mjs", import.meta.url);

export function clientSuite(runtime, skip) {
  describe(`opencode client and bare zod on ${runtime}`, { skip }, () => {
    let client;
    before(() => {
      client = new HostClient(runtime, makeHostDir());
      return client.request("initialize", { protocolVersion: 1 });
    });
    after(() => client?.close?.());

    test("client.app.log and client.tui.showToast at load time come back as the file's logs", async () => {
      const dir = tempDir("podcode-client-");
      const file = writePlugin(dir, "logger.mjs", `
        export const Logger = async ({ client }) => {
          await client.app.log({ body: { service: "wakelock", level: "info", message: "Plugin initializing", extra: { pid: 1 } } });
          await client.app.log({ service: "bare", level: "loud", message: "no body wrapper" });
          const res = await client.tui.showToast({ body: { title: "Hi", message: "loaded", variant: "success" } });
          const features = [typeof client.session?.status, typeof client.session?.promptAsync, "session" in client];
          return {
            tool: {
              probe: {
                description: "reports the client's answers", args: {},
                async execute() {
                  let err;
                  try { await client.find.files({ query: { pattern: "x" } }); } catch (e) { err = e.message; }
                  await client.app.log({ body: { service: "later", level: "debug", message: "from a tool" } });
                  return JSON.stringify({ res, features, err });
                },
              },
            },
          };
        };
      `);
      const r = await load(client, file, "plugin");
      assert.deepEqual(r.logs, [
        { kind: "log", level: "info", service: "wakelock", message: "Plugin initializing", extra: { pid: 1 } },
        { kind: "log", level: "info", service: "bare", message: "no body wrapper" },
        { kind: "toast", level: "success", service: "Hi", message: "loaded" },
      ]);
      const out = JSON.parse((await execute(client, file, "probe")).output);
      assert.deepEqual(out, {
        res: { data: true },
        features: ["function", "function", true],
        err: "client.find.files is not supported in Podcode (it offers client.app.log, client.tui.showToast, client.auth.set and client.session.list/get/messages/status/update/prompt/command)",
      });
      // After the load, calls go to Rust (which appends them to Podcode's plugin log).
      const logged = client.notifications.filter((n) => n.method === "client.log").map((n) => n.params);
      assert.equal(logged.length, 1);
      assert.equal(typeof logged[0].time, "string");
      delete logged[0].time;
      assert.deepEqual(logged[0], { file, kind: "log", level: "debug", service: "later", message: "from a tool" });
    });

    test("the seed's deploy-status.mjs loads from a folder with no node_modules (host zod)", async () => {
      const dir = tempDir("podcode-seed-");
      const file = join(dir, "deploy-status.mjs");
      copyFileSync(SEED_DEPLOY_STATUS, file);
      assert.match(readFileSync(file, "utf8"), /^import \{ z \} from "zod"/);
      const r = await load(client, file, "plugin", { "deploy-status": { endpoint: "http://127.0.0.1:9" } });
      assert.equal(r.format, "podcode");
      assert.deepEqual(r.tools.map((t) => t.id), ["deploy_status"]);
      assert.deepEqual(r.logs, [{
        kind: "host", level: "info", service: "",
        message: "zod is not installed beside this file, so it uses Podcode's zod 3.25.76 (run `npm install zod` in its folder to choose another)",
      }]);
      assert.equal(
        JSON.stringify(r.tools[0].parameters),
        '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"service":{"description":"Service name, e.g. \'api\' or \'web\'.","type":"string"}},"required":["service"]}',
      );
      const bad = await client.request("validate", { path: file, tool: "deploy_status", args: { service: 5 } });
      assert.equal(bad.ok, false);
    });

    test("a missing zod/v4 is still an error naming the package", async () => {
      const dir = tempDir("podcode-zod4-");
      const file = writePlugin(dir, "v4.mjs", `import { z } from "zod/v4";\nexport const t = { description: "d", args: { a: z.string() }, async execute() { return "x" } };\n`);
      const e = await rejection(load(client, file, "opencode-tools"));
      assert.match(e.message, /zod/);
    });
  });
}
