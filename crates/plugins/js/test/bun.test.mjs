// bun.test.mjs — the host driven as a real `bun host.mjs` child process (skipped, with a
// reason, only when `bun` is not on PATH).
import { hasBun } from "./harness.mjs";
import { clientSuite } from "./suite_opencode_client.mjs";
import { protocolSuite } from "./suite_protocol.mjs";
import { schemaSuite } from "./suite_schemas.mjs";
import { seedSuite } from "./suite_seeds.mjs";

const skip = hasBun() ? false : "bun is not on PATH (install it with npm install -g bun)";
protocolSuite("bun", skip);
seedSuite("bun", skip);
schemaSuite("bun", skip);
clientSuite("bun", skip);
