// node.test.mjs — the host driven as a real `node host.mjs` child process.
import { clientSuite } from "./suite_opencode_client.mjs";
import { protocolSuite } from "./suite_protocol.mjs";
import { schemaSuite } from "./suite_schemas.mjs";
import { seedSuite } from "./suite_seeds.mjs";

protocolSuite("node", false);
seedSuite("node", false);
schemaSuite("node", false);
clientSuite("node", false);
