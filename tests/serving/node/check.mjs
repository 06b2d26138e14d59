// Reads rxllm's UI message streams with the `ai` package's own client, 5.x and 6.x:
// the current ones, and 5.0.92 and 6.0.0, whose chunk schemas are strict (a key they do
// not list refuses the chunk).
//
// stdin: {"inputs": [{"name": str, "body": str, "tools"?: [str]}]}, each body the SSE
// bytes rxllm wrote; `tools` names the app's own tools (any object input), which the
// message is then validated against, as a server validating a stored chat does.
// stdout: {"headers": {version: headers}, "results": [{version, name, errors, chunks, message}]}
//
// Each body goes through the path useChat takes: DefaultChatTransport (its fetch
// answers with the body), which parses the SSE and validates every chunk against the
// package's uiMessageChunkSchema, then readUIMessageStream, which builds the message
// and throws on chunks out of order (a delta before its start, output for an unknown
// tool call). Any error is reported; none is expected.

const VERSIONS = ["ai5-strict", "ai5", "ai6-strict", "ai6"];

async function readStdin() {
  const pieces = [];
  for await (const piece of process.stdin) pieces.push(piece);
  return JSON.parse(Buffer.concat(pieces).toString("utf8"));
}

async function check(ai, name, body, toolNames) {
  const errors = [];
  const types = [];
  const errorTexts = []; // what `error` chunks said: the stream's own news, not a fault
  let message = null;
  const transport = new ai.DefaultChatTransport({
    api: "http://rxllm.invalid/api/chat",
    fetch: async () => new Response(body, { headers: ai.UI_MESSAGE_STREAM_HEADERS }),
  });
  try {
    const chunks = await transport.sendMessages({
      trigger: "submit-message",
      chatId: name,
      messageId: undefined,
      messages: [],
      abortSignal: undefined,
    });
    const [forMessage, forTypes] = chunks.tee();
    const counting = (async () => {
      for await (const chunk of forTypes) {
        types.push(chunk.type);
        if (chunk.type === "error") errorTexts.push(chunk.errorText);
      }
    })().catch((error) => errors.push(String(error?.message ?? error)));
    const messages = ai.readUIMessageStream({
      stream: forMessage,
      onError: (error) => errors.push(String(error?.message ?? error)),
    });
    for await (const snapshot of messages) message = snapshot;
    await counting;
  } catch (error) {
    errors.push(String(error?.message ?? error));
  }
  // The message goes back to the server with the next turn, which validates it.
  if (message !== null) {
    const tools = toolNames && Object.fromEntries(
      toolNames.map((tool) => [tool, ai.tool({ inputSchema: ai.jsonSchema({ type: "object" }) })]),
    );
    const validated = await ai.safeValidateUIMessages({ messages: [message], tools });
    if (!validated.success) errors.push(String(validated.error?.message ?? validated.error));
  }
  const faults = errors.filter((error) => !errorTexts.includes(error));
  return { name, errors: [...new Set(faults)], errorTexts, chunks: types, message };
}

const { inputs } = await readStdin();
const headers = {};
const results = [];
for (const version of VERSIONS) {
  const ai = await import(version);
  headers[version] = ai.UI_MESSAGE_STREAM_HEADERS;
  for (const { name, body, tools } of inputs) {
    results.push({ version, ...(await check(ai, name, body, tools)) });
  }
}
process.stdout.write(JSON.stringify({ headers, results }));
