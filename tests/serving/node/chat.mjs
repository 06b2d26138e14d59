// Sends one message per body through the `ai` package's AbstractChat, the class under
// `useChat` (React, Vue and Svelte wrap it with their own state), 5.x and 6.x: what a
// chat UI holds once the response ends. On an `error` chunk the chat stops reading
// (its `onError` throws), so what the UI shows is what came before it.
//
// stdin: {"inputs": [{"name": str, "body": str}]}, each body the SSE bytes rxllm wrote.
// stdout: {"results": [{version, name, status, error, message}]}: the chat's status
// ("ready" or "error"), its error's message, and the last message (the assistant's).

const VERSIONS = ["ai5-strict", "ai5", "ai6-strict", "ai6"];

async function readStdin() {
  const pieces = [];
  for await (const piece of process.stdin) pieces.push(piece);
  return JSON.parse(Buffer.concat(pieces).toString("utf8"));
}

class State {
  constructor() {
    this.messages = [];
    this.status = "ready";
    this.error = undefined;
  }
  pushMessage(message) {
    this.messages = [...this.messages, message];
  }
  popMessage() {
    this.messages = this.messages.slice(0, -1);
  }
  replaceMessage(index, message) {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  }
  snapshot(value) {
    return structuredClone(value);
  }
}

async function send(ai, name, body) {
  class Chat extends ai.AbstractChat {
    constructor(options) {
      super({ ...options, state: new State() });
    }
  }
  const chat = new Chat({
    id: name,
    transport: new ai.DefaultChatTransport({
      api: "http://rxllm.invalid/api/chat",
      fetch: async () => new Response(body, { headers: ai.UI_MESSAGE_STREAM_HEADERS }),
    }),
    onError: () => {}, // the chat keeps it as `error` too
  });
  await chat.sendMessage({ text: "hi" });
  const message = chat.messages.at(-1);
  return {
    name,
    status: chat.status,
    error: chat.error === undefined ? null : String(chat.error.message),
    message: message.role === "assistant" ? message : null,
  };
}

const { inputs } = await readStdin();
const results = [];
for (const version of VERSIONS) {
  const ai = await import(version);
  for (const { name, body } of inputs) results.push({ version, ...(await send(ai, name, body)) });
}
process.stdout.write(JSON.stringify({ results }));
