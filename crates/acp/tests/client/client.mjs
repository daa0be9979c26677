// A real ACP client (the official @agentclientprotocol/sdk) driving `podcode acp`, for the
// Rust tests in crates/cli/tests/acp.rs. It spawns $PODCODE_BIN acp in $ACP_CWD, runs one
// scenario, and prints one JSON object on stdout: what it saw, in order.
//
//   node client.mjs prompt  PROMPT          new session, one prompt
//   node client.mjs cancel  PROMPT [MARKER] cancel once file MARKER exists (without one: on
//                                           the first chunk, or at the ask with $ACP_PERMISSION=cancel)
//   node client.mjs load    SESSION_ID      load an earlier session
//   node client.mjs modes   PROMPT          switch to mode plan, then model, then prompt
//   node client.mjs list    COUNT PROMPT    COUNT new sessions, PROMPT in the first and
//                                           `more` in the others (a session is stored at
//                                           its first prompt), then session/list of
//                                           $ACP_CWD page by page, and of /
//   node client.mjs drafts  PROMPT          two new sessions, session/list, PROMPT in the
//                                           first, session/list again
//   node client.mjs refuse  FILE            what wrong cwds, empty prompts and a wrong
//                                           list cursor are answered (FILE: a file's path)
//
// Permission requests are answered with the option $ACP_PERMISSION (default allow_once;
// `cancel`: cancel the turn instead, then answer `cancelled`).
// $ACP_MCP_COMMAND, when set, is passed as a stdio MCP server named `everything`.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const [scenario, arg, marker] = process.argv.slice(2);
const cwd = process.env.ACP_CWD;
const answer = process.env.ACP_PERMISSION ?? "allow_once";
const mcpServers = process.env.ACP_MCP_COMMAND
  ? [{ name: "everything", command: process.env.ACP_MCP_COMMAND, args: [], env: [] }]
  : [];

const agent = spawn(process.env.PODCODE_BIN, ["acp"], {
  cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agent.on("exit", (code) => resolve(code)));
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const seen = [];
let onUpdate = () => {};
let cancelTurn = () => {};
let promptEnded;
const promptDone = new Promise((resolve) => (promptEnded = resolve));
const app = client({ name: "podcode-test-client" })
  .onNotification("session/update", ({ params }) => {
    seen.push({ update: params.update });
    onUpdate(params.update);
  })
  .onRequest("session/request_permission", async ({ params, signal }) => {
    seen.push({ permission: params });
    if (answer === "cancel") {
      // The user cancels the turn while the agent waits for this answer; as the protocol
      // asks, the client then answers the pending request `cancelled` (here: once the
      // prompt has ended, or the request was withdrawn).
      cancelTurn();
      await Promise.race([
        promptDone,
        new Promise((resolve) => signal.addEventListener("abort", resolve)),
      ]);
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const out = { init };
  // A refused request as {code, message}, to compare with the agent's texts.
  const refused = async (method, params) => {
    try {
      return { answered: await ctx.request(method, params) };
    } catch (e) {
      return { code: e.code, message: e.message ?? String(e) };
    }
  };
  if (scenario === "list") {
    out.sessionIds = [];
    for (let i = 0; i < Number(arg); i++) {
      const s = await ctx.request("session/new", { cwd, mcpServers: [] });
      out.sessionIds.push(s.sessionId);
    }
    for (const [i, sessionId] of out.sessionIds.entries()) {
      const stop = await ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: i === 0 ? marker : "more" }],
      });
      if (i === 0) out.stop = stop;
    }
    out.pages = [];
    let cursor;
    do {
      const page = await ctx.request("session/list", cursor ? { cwd, cursor } : { cwd });
      out.pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && out.pages.length < 10);
    out.elsewhere = await ctx.request("session/list", { cwd: "/" });
    return out;
  }
  if (scenario === "drafts") {
    const first = await ctx.request("session/new", { cwd, mcpServers: [] });
    const second = await ctx.request("session/new", { cwd, mcpServers: [] });
    out.sessionIds = [first.sessionId, second.sessionId];
    out.before = await ctx.request("session/list", { cwd });
    out.stop = await ctx.request("session/prompt", {
      sessionId: first.sessionId,
      prompt: [{ type: "text", text: arg }],
    });
    out.after = await ctx.request("session/list", { cwd });
    return out;
  }
  if (scenario === "refuse") {
    out.fileCwd = await refused("session/new", { cwd: arg, mcpServers: [] });
    out.missingCwd = await refused("session/new", { cwd: `${cwd}/missing`, mcpServers: [] });
    out.relativeList = await refused("session/list", { cwd: "relative/dir" });
    out.badCursor = await refused("session/list", { cwd, cursor: "nonsense" });
    const session = await ctx.request("session/new", { cwd, mcpServers: [] });
    out.noBlocks = await refused("session/prompt", { sessionId: session.sessionId, prompt: [] });
    out.blank = await refused("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: " \n\t" }],
    });
    return out;
  }
  if (scenario === "load") {
    out.load = await ctx.request("session/load", { sessionId: arg, cwd, mcpServers: [] });
    // Updates of the replay arrive before the response.
    return out;
  }
  const session = await ctx.request("session/new", { cwd, mcpServers });
  out.session = session;
  const prompt = (text) =>
    ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    });
  if (scenario === "prompt") {
    out.stop = await prompt(arg);
  } else if (scenario === "cancel") {
    let cancelled = false;
    const cancel = () => {
      if (cancelled) return;
      cancelled = true;
      seen.push({ cancel: true });
      ctx.notify("session/cancel", { sessionId: session.sessionId });
    };
    cancelTurn = cancel;
    if (marker) {
      const timer = setInterval(() => {
        if (existsSync(marker)) {
          clearInterval(timer);
          cancel();
        }
      }, 20);
    } else if (answer !== "cancel") {
      onUpdate = (u) => {
        if (u.sessionUpdate === "agent_message_chunk") cancel();
      };
    }
    out.stop = await prompt(arg);
    promptEnded();
  } else if (scenario === "modes") {
    out.setMode = await ctx.request("session/set_mode", {
      sessionId: session.sessionId,
      modeId: "plan",
    });
    out.setModel = await ctx.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "scripted/other",
    });
    try {
      await ctx.request("session/set_mode", { sessionId: session.sessionId, modeId: "nope" });
    } catch (e) {
      out.badMode = e.message ?? String(e);
    }
    try {
      await ctx.request("session/set_config_option", {
        sessionId: session.sessionId,
        configId: "speed",
        value: "fast",
      });
    } catch (e) {
      out.badOption = e.message ?? String(e);
    }
    out.stop = await prompt(arg);
  }
  return out;
});

agent.stdin.end();
result.exitCode = await exited;
result.seen = seen;
process.stdout.write(JSON.stringify(result) + "\n");
