// An MCP client on the official TypeScript SDK, driving `azero mcp` the
// way agents built on it do: node mcp_sdk_client.mjs AZERO ARGS... in the
// repository. It prints what it saw as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, cwd: process.cwd(), env: process.env, stderr: "inherit" });
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);

// failure is the protocol error a call ends with, null if it succeeds.
const failure = async (call) => {
  try {
    await call;
    return null;
  } catch (e) {
    return { mcpError: e instanceof McpError, code: e.code, message: e.message };
  }
};

const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.apply = await client.callTool({
  name: "azero_apply",
  arguments: { file: "small.py", edits: "<<<<<<< SEARCH\nsmall_2 = 2\n=======\nsmall_2 = 22\n>>>>>>> REPLACE\n" },
});
out.badArgument = await client.callTool({ name: "azero_apply", arguments: { file: 5, edits: "x" } });
out.notAnObject = await failure(
  client.request({ method: "tools/call", params: { name: "azero_apply", arguments: "x" } }, CallToolResultSchema),
);
out.unknownTool = await failure(client.callTool({ name: "nope", arguments: {} }));
// Over the 16 MiB limit: the SDK puts the id after the params, and the
// answer must still come under it, or the call would wait for its timeout.
out.tooLong = await failure(
  client.callTool({ name: "azero_write", arguments: { path: "big.txt", content: "x".repeat(17 << 20) } }),
);
out.toolsAfter = (await client.listTools()).tools.length;
await client.close();
console.log(JSON.stringify(out));
