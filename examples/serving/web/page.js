// The example chat page: the ai package's own transport and stream reader, no framework.
// A chat's id is in the URL (?chat=), so a reload, or the same URL on another app
// process, resumes the running turn; Stop aborts the fetch and cancels the turn on the
// server (the AI SDK treats an abort as a disconnect: vercel/ai#8385).
import { DefaultChatTransport, readUIMessageStream } from "ai";

const params = new URLSearchParams(location.search);
const chatId = params.get("chat") || crypto.randomUUID().replaceAll("-", "");
const model = params.get("model") || "rxllm-local";
const transport = new DefaultChatTransport({ api: "/api/chat", body: { model } });
const $ = (id) => document.getElementById(id);
let controller = null;

function render(message) {
  $("answer").textContent = message.parts
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
  $("message").textContent = JSON.stringify(message.parts);
  // An error's facts come as the message's metadata just before its `error` chunk,
  // whose text alone says what failed: whether trying again may help is here.
  const failed = message.metadata?.rxllm?.error;
  $("failure").textContent = failed ? describe(failed) : "";
}

function describe({ kind, status, retryable, retry_after }) {
  const what = status === null ? kind : `${kind}, status ${status}`;
  if (!retryable) return `failed (${what}): sending again will not help`;
  const wait = retry_after === null ? "" : ` after ${Math.ceil(retry_after)} s`;
  return `failed (${what}): send again${wait}`;
}

async function show(stream) {
  $("status").textContent = "streaming";
  const onError = (error) => {
    $("errors").textContent += `${error}\n`;
  };
  try {
    for await (const message of readUIMessageStream({ stream, onError })) render(message);
    if (!controller?.signal.aborted) $("status").textContent = "done";
  } catch (error) {
    $("status").textContent = controller?.signal.aborted ? "stopped" : `error: ${error}`;
  }
}

$("send").addEventListener("click", async () => {
  controller = new AbortController();
  history.replaceState(null, "", `?chat=${chatId}&model=${encodeURIComponent(model)}`);
  const text = $("prompt").value || "hi";
  const messages = [{ id: "u1", role: "user", parts: [{ type: "text", text }] }];
  const stream = await transport.sendMessages({
    trigger: "submit-message",
    chatId,
    messageId: undefined,
    messages,
    abortSignal: controller.signal,
  });
  await show(stream);
});

$("stop").addEventListener("click", async () => {
  controller?.abort();
  await fetch(`/api/chat/${chatId}/cancel`, { method: "POST" });
  $("status").textContent = "stopped";
});

(async () => {
  $("chat").textContent = chatId;
  const stream = params.get("chat") ? await transport.reconnectToStream({ chatId }) : null;
  window.rxllmReady = true;
  if (stream) await show(stream);
  else $("status").textContent = "idle";
})();
