// A minimal stdio MCP server for the size tests: `dump` answers on one line with a text of
// `bytes` "x" characters, or with `units` copies of UNIT (escapes, non-ASCII) then
// "THE END", written in pieces so the server never holds it whole; `kind` makes it an image
// (`data` of that size), an `isError` result, or a JSON-RPC error with a message of that
// size instead. `ping_me` answers "pong"; `cut_me` answers a text holding both halves of an
// emoji apart (each a lone surrogate, which JSON.stringify writes as `\ud83d`, `\ude00`). It speaks just enough of the protocol
// (initialize, tools/list, tools/call) and writes its id first, last, or (with a field
// after it) in the middle, as asked.
import { createInterface } from "node:readline";
import { once } from "node:events";

const idLast = process.argv.includes("--id-last");
const idMiddle = process.argv.includes("--id-middle");
// Keep in step with UNIT in tests/limits.rs and benches/mcp_output.rs (64 bytes as UTF-8).
const UNIT = 'line "quoted" \\ tab\t é ✓ 0123456789 abcdefghijklmnopqrstuvwx\n';

const write = async (s) => {
  if (!process.stdout.write(s)) await once(process.stdout, "drain");
};
// The message around a body written in pieces; `body` is a JSON fragment writer.
const send = async (id, open, body, close) => {
  const idPart = `"id":${JSON.stringify(id)}`;
  if (idMiddle) {
    await write(`{${open}`);
    await body();
    await write(`${close},${idPart},"jsonrpc":"2.0","after":"x"}\n`);
  } else if (idLast) {
    await write(`{${open}`);
    await body();
    await write(`${close},"jsonrpc":"2.0",${idPart}}\n`);
  } else {
    await write(`{"jsonrpc":"2.0",${idPart},${open}`);
    await body();
    await write(`${close}}\n`);
  }
};
const reply = (id, body) => {
  const inner = JSON.stringify(body).slice(1, -1);
  return send(id, inner, async () => {}, "");
};
// A JSON string's inside, `count` copies of `piece`, in chunks.
const repeated = (piece, count) => async () => {
  const chunk = 4096;
  const escaped = JSON.stringify(piece.repeat(chunk)).slice(1, -1);
  for (let left = count; left > 0; left -= chunk) {
    await write(left >= chunk ? escaped : JSON.stringify(piece.repeat(left)).slice(1, -1));
  }
};
const dump = (id, args) => {
  const body = args.units !== undefined
    ? async () => {
        await repeated(UNIT, args.units)();
        await write("THE END");
      }
    : repeated("x", args.bytes ?? 0);
  switch (args.kind ?? "text") {
    case "image":
      return send(id, '"result":{"content":[{"type":"image","mimeType":"image/png","data":"', body, '"}]}');
    case "is_error":
      return send(id, '"result":{"isError":true,"content":[{"type":"text","text":"', body, '"}]}');
    case "error":
      return send(id, '"error":{"code":-32000,"message":"', body, '"}');
    case "mixed":
      return send(
        id,
        '"result":{"content":[{"type":"text","text":"first"},{"type":"image","mimeType":"image/png","data":"AAAA"},{"type":"text","text":"',
        body,
        '"}]}',
      );
    default:
      return send(id, '"result":{"content":[{"type":"text","text":"', body, '"}]}');
  }
};

const tools = [
  {
    name: "dump",
    description: "Returns a long result.",
    inputSchema: {
      type: "object",
      properties: { bytes: { type: "integer" }, units: { type: "integer" }, kind: { type: "string" } },
    },
  },
  { name: "ping_me", description: "Returns pong.", inputSchema: { type: "object", properties: {} } },
  { name: "cut_me", description: "Returns a text cut mid-emoji.", inputSchema: { type: "object", properties: {} } },
];
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  queue = queue.then(() => {
    switch (msg.method) {
      case "initialize":
        return reply(msg.id, {
          result: {
            protocolVersion: msg.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "huge-line", version: "1.0.0" },
          },
        });
      case "tools/list":
        return reply(msg.id, { result: { tools } });
      case "tools/call":
        if (msg.params.name === "dump") return dump(msg.id, msg.params.arguments ?? {});
        if (msg.params.name === "cut_me") {
          const text = `cut ${"😀".slice(0, 1)} here, ${"😀".slice(1)} there, whole 😀`;
          return reply(msg.id, { result: { content: [{ type: "text", text }] } });
        }
        return reply(msg.id, { result: { content: [{ type: "text", text: "pong" }] } });
      case "ping":
        return reply(msg.id, { result: {} });
      default:
        return reply(msg.id, { error: { code: -32601, message: "unknown method" } });
    }
  });
});
