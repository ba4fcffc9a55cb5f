// What a <trickle-chat> sends, and what its tools answer: the body of
// each request in the chat's protocol, the ids the AI SDK's messages
// carry, and a call of the page's tool made into the tool message that
// goes back to the model.

import { STR_CHAT_REFUSAL, STR_TOOL_FAILED } from "./contract.js";
import { needsApproval } from "./approval.js";
import { requestMessages, uiMessages, runnerOf, toolDeclarations, toolChoiceOf } from "./history.js";
import { wordOf } from "./strings.js";

// PROTOCOLS are what a chat can send (its protocol attribute): "openai"
// (the default: {messages, model, tools, tool_choice}, OpenAI-style) and
// "ai-sdk" (what the AI SDK's DefaultChatTransport sends a useChat route:
// {id, messages: UIMessage[], trigger, messageId}).
export const PROTOCOLS = new Set(["openai", "ai-sdk"]);

// newId is a fresh message or chat id (the AI SDK's are 16 letters and
// digits; any unique string does).
export function newId() {
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => abc[b % abc.length]).join("");
}

/**
 * requestBody is the body of a chat's next request. OpenAI's: the history
 * as the model takes it, the model, the page's tools and its tool choice.
 * The AI SDK's (DefaultChatTransport's body): the chat's id, the history
 * as UI messages, the trigger and the message id it is about; the route
 * declares the tools itself. cutOff is the note a cut-off answer carries
 * to the model; idOf(i) the id of messages[i].
 */
export function requestBody({ protocol, chatId, messages, idOf, cutOff, model, tools, toolChoice, trigger, messageId }) {
  if (protocol === "ai-sdk") {
    const body = { id: chatId, messages: uiMessages(messages, idOf, cutOff), trigger };
    if (messageId !== undefined) body.messageId = messageId;
    return body;
  }
  const body = { messages: requestMessages(messages, cutOff) };
  if (model) body.model = model;
  const declared = toolDeclarations(tools);
  if (declared.length > 0) body.tools = declared;
  const choice = toolChoiceOf(toolChoice);
  if (choice !== undefined) body.tool_choice = choice;
  return body;
}

/**
 * settleCalls settles the complete tool calls of m, the message answer
 * ended with. The backend may wait on the reader (the AI SDK's
 * tool-approval-request): each of its questions is asked as a page
 * tool's is, by approve(call), the decision kept on m (approvals), and it
 * resolves "asked". Otherwise, where the page has a tool for every call,
 * each runs in turn and its message goes onto messages (toolMessage), and
 * it resolves true. It resolves false when no round follows: m did not
 * end complete, called nothing, or called a tool the page lacks.
 */
export async function settleCalls(el, m, answer, messages, tools, approve) {
  const calls = (m.tool_calls ?? []).filter((c) => c.complete);
  if (m.status !== "complete" || calls.length === 0) return false;
  const asks = (m.approvals ?? []).filter((a) => calls.some((c) => c.id === a.tool_call_id));
  if (asks.length > 0) {
    for (const a of asks) a.approved = await approve(calls.find((c) => c.id === a.tool_call_id));
    return "asked";
  }
  if (!calls.every((c) => runnerOf(tools[c.name]))) return false;
  for (const c of calls) messages.push(await toolMessage(el, tools[c.name], c, answer, () => approve(c)));
  return true;
}

/**
 * toolMessage runs the page's tool for call (one of answer's tool calls)
 * and resolves with the tool message that goes back to the model: its
 * result (a string as it is, anything else as JSON), or {error} with the
 * error also shown after the answer, in the chat's words (el's). A tool
 * that must ask first runs only once approve() resolves true; denied, it
 * never runs and the model gets the chat's refusal.
 */
export async function toolMessage(el, tool, call, answer, approve) {
  const about = { id: call.id, name: call.name };
  if ((await needsApproval(tool, call.arguments ?? {}, about)) && !(await approve())) {
    return { role: "tool", tool_call_id: call.id, name: call.name, content: wordOf(el, STR_CHAT_REFUSAL), denied: true };
  }
  try {
    const result = await runnerOf(tool)(call.arguments ?? {}, about);
    const content = typeof result === "string" ? result : JSON.stringify(result ?? null);
    return { role: "tool", tool_call_id: call.id, name: call.name, content };
  } catch (err) {
    const message = String(err?.message ?? err);
    const note = document.createElement("p");
    note.dataset.trickleChat = "tool-error";
    note.textContent = `${call.name}: ${wordOf(el, STR_TOOL_FAILED).replace("{error}", message)}`;
    answer.after(note);
    // error is the AI SDK's output-error.
    return { role: "tool", tool_call_id: call.id, name: call.name, content: JSON.stringify({ error: message }), error: message };
  }
}
