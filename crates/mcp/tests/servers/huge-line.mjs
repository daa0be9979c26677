// A minimal stdio MCP server for the size-limit tests: `dump` answers with a text of
// `bytes` characters on one line; `ping_me` answers "pong". It speaks just enough of the
// protocol (initialize, tools/list, tools/call) and writes its id first, last, or (with a
// field after it) in the middle, as asked.
import { createInterface } from "node:readline";

const idLast = process.argv.includes("--id-last");
const idMiddle = process.argv.includes("--id-middle");
const send = (id, body) => {
  const msg = idMiddle
    ? { ...body, id, jsonrpc: "2.0", after: "x" }
    : idLast
      ? { ...body, jsonrpc: "2.0", id }
      : { jsonrpc: "2.0", id, ...body };
  process.stdout.write(JSON.stringify(msg) + "\n");
};
const tools = [
  {
    name: "dump",
    description: "Returns a text of the given size.",
    inputSchema: { type: "object", properties: { bytes: { type: "integer" } }, required: ["bytes"] },
  },
  { name: "ping_me", description: "Returns pong.", inputSchema: { type: "object", properties: {} } },
];
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  switch (msg.method) {
    case "initialize":
      return send(msg.id, {
        result: {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "huge-line", version: "1.0.0" },
        },
      });
    case "tools/list":
      return send(msg.id, { result: { tools } });
    case "tools/call": {
      const text = msg.params.name === "dump" ? "x".repeat(msg.params.arguments.bytes) : "pong";
      return send(msg.id, { result: { content: [{ type: "text", text }] } });
    }
    case "ping":
      return send(msg.id, { result: {} });
    default:
      return send(msg.id, { error: { code: -32601, message: "unknown method" } });
  }
});
