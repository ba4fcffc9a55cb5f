// A conversation's history as <trickle-chat> keeps it: OpenAI-style
// messages, checked when the page sets them, turned into the request's
// messages and into the thread's turns. Pure functions (node --test).

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

// checkMessages copies a page's history, or throws a TypeError that says
// which message is wrong and why.
export function checkMessages(list) {
  if (!Array.isArray(list)) throw new TypeError("trickle: chat.messages must be an array of messages");
  return list.map((m, i) => {
    if (typeof m !== "object" || m === null) throw new TypeError(`trickle: chat.messages[${i}] is not a message object`);
    if (!ROLES.has(m.role)) throw new TypeError(`trickle: chat.messages[${i}].role must be one of ${[...ROLES].join(", ")}, not ${JSON.stringify(m.role)}`);
    if (typeof m.content !== "string" && !(m.role === "assistant" && m.content == null)) {
      throw new TypeError(`trickle: chat.messages[${i}].content must be a string`);
    }
    if (m.role === "tool" && typeof m.tool_call_id !== "string") {
      throw new TypeError(`trickle: chat.messages[${i}] is a tool message without a tool_call_id`);
    }
    const c = structuredClone(m);
    if (c.content == null) c.content = "";
    return c;
  });
}

// toRequest returns the mapping of one kept message to what the model is
// sent: the fields the provider knows. An answer that was cut off (stopped,
// or ended before the model finished) goes back with cutOffNote after its
// text, so that the next turn does not take it for a finished answer; tool
// calls go back in the OpenAI shape, with their arguments' text.
export function toRequest(cutOffNote) {
  return (m) => {
    switch (m.role) {
      case "assistant": {
        const out = { role: "assistant", content: m.content ?? "" };
        if (m.incomplete) out.content = out.content === "" ? cutOffNote : `${out.content}\n\n${cutOffNote}`;
        const calls = (m.tool_calls ?? []).filter((c) => c && c.complete !== false);
        if (calls.length > 0) {
          out.tool_calls = calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.raw || JSON.stringify(c.arguments ?? {}) },
          }));
        }
        return out;
      }
      case "tool":
        return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
      case "developer":
      case "system":
        return { role: m.role, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  };
}

// requestMessages is the history as the model is sent it (toRequest on
// each), keeping only what a provider accepts: a tool call goes back only
// with its result right after it (a call the page could not run is left
// out, and so is a result whose call is gone), and an answer with no text
// and no call left (a turn that failed or was stopped before its first
// word) stays in the thread for the reader but is not sent: providers
// refuse an empty assistant message.
export function requestMessages(messages, cutOffNote) {
  const send = toRequest(cutOffNote);
  const out = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") continue; // placed after their call, below
    const r = send(m);
    if (m.role !== "assistant") {
      out.push(r);
      continue;
    }
    const results = toolResults(messages, i);
    const calls = (r.tool_calls ?? []).filter((c) => results.has(c.id));
    if (calls.length > 0) r.tool_calls = calls;
    else delete r.tool_calls;
    if (calls.length === 0 && (m.content ?? "") === "") continue;
    out.push(r);
    for (const c of calls) out.push(send(results.get(c.id)));
  }
  return out;
}

// toolResults maps the tool messages right after messages[i] by their
// call's id (the first answer of each call).
function toolResults(messages, i) {
  const results = new Map();
  for (let j = i + 1; j < messages.length && messages[j].role === "tool"; j++) {
    if (!results.has(messages[j].tool_call_id)) results.set(messages[j].tool_call_id, messages[j]);
  }
  return results;
}

// parseOutput is a tool message's content as the AI SDK's output: the
// JSON value it holds, or the text.
function parseOutput(content) {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

// uiMessages is the history as the AI SDK's UIMessage[] (what useChat
// sends): user and system messages with a text part; an answer with its
// reasoning, text and tool parts ("tool-NAME", state output-available with
// input and output, or output-error with errorText), and the answers of one
// tool round merged into one message, each step opened by a step-start
// part, as useChat keeps them. What requestMessages leaves out (a call
// with no result, an empty failed turn) is left out here too. idOf(i)
// names the message that starts at messages[i].
export function uiMessages(messages, idOf, cutOffNote) {
  const out = [];
  let cont = null; // the assistant message a tool round continues
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") continue;
    if (m.role !== "assistant") {
      cont = null;
      out.push({ id: idOf(i), role: m.role === "developer" ? "system" : m.role, parts: [{ type: "text", text: String(m.content ?? "") }] });
      continue;
    }
    const results = toolResults(messages, i);
    const parts = [];
    if (m.thinking) parts.push({ type: "reasoning", text: m.thinking, state: "done" });
    let text = m.content ?? "";
    if (m.incomplete) text = text === "" ? cutOffNote : `${text}\n\n${cutOffNote}`;
    if (text !== "") parts.push({ type: "text", text, state: "done" });
    let called = 0;
    const later = messages.slice(i + 1).some((n) => n.role === "assistant");
    for (const c of m.tool_calls ?? []) {
      const r = results.get(c.id);
      const asked = (m.approvals ?? []).find((a) => a.tool_call_id === c?.id && typeof a.approved === "boolean");
      if (c && c.complete !== false && !r && asked) {
        // The backend asked, the reader answered: the AI SDK's
        // approval-responded, until an answer came after it (then a
        // denied call reads as output-denied, as useChat keeps it).
        const approval = { id: asked.id, approved: asked.approved };
        if (!later) parts.push({ type: `tool-${c.name}`, toolCallId: c.id, state: "approval-responded", input: c.arguments ?? {}, approval });
        else if (!asked.approved) parts.push({ type: `tool-${c.name}`, toolCallId: c.id, state: "output-denied", input: c.arguments ?? {}, approval });
        else continue;
        called++;
        continue;
      }
      if (!c || c.complete === false || !r) continue;
      called++;
      const part = { type: `tool-${c.name}`, toolCallId: c.id, input: c.arguments ?? {} };
      // A call the reader denied reads as an error every major takes,
      // its text the refusal.
      if (r.error || r.denied) Object.assign(part, { state: "output-error", errorText: String(r.error ?? r.content) });
      else Object.assign(part, { state: "output-available", output: parseOutput(r.content) });
      parts.push(part);
    }
    if (parts.length === 0 || (text === "" && called === 0 && !m.thinking)) continue;
    if (cont) cont.parts.push({ type: "step-start" }, ...parts);
    else {
      cont = { id: idOf(i), role: "assistant", parts: [{ type: "step-start" }, ...parts] };
      out.push(cont);
    }
    if (called === 0) cont = null;
  }
  return out;
}

// isToolEntry says whether a chat.tools entry is one the chat can run: a
// function, or {description?, parameters?, run}.
function isToolEntry(t) {
  return typeof t === "function" || (typeof t === "object" && t !== null && typeof t.run === "function");
}

// checkTools copies a page's chat.tools, or throws a TypeError that says
// which entry is wrong and why.
export function checkTools(tools) {
  if (tools == null) return {};
  if (typeof tools !== "object" || Array.isArray(tools)) throw new TypeError("trickle: chat.tools must be an object of tools by name");
  const out = {};
  for (const [name, t] of Object.entries(tools)) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw new TypeError(`trickle: chat.tools: the name ${JSON.stringify(name)} must be 1 to 64 letters, digits, _ or -`);
    if (!isToolEntry(t)) throw new TypeError(`trickle: chat.tools.${name} must be a function or {description, parameters, run(args, call)}`);
    if (typeof t === "object" && t.parameters != null && (typeof t.parameters !== "object" || Array.isArray(t.parameters))) {
      throw new TypeError(`trickle: chat.tools.${name}.parameters must be a JSON Schema object`);
    }
    out[name] = t;
  }
  return out;
}

// runnerOf is the function that runs a chat.tools entry, or null.
export function runnerOf(t) {
  if (typeof t === "function") return t;
  if (isToolEntry(t)) return t.run.bind(t);
  return null;
}

// toolDeclarations is chat.tools as OpenAI's tools: each with its
// description and parameters (a plain function is declared by its name,
// taking any object).
export function toolDeclarations(tools) {
  const out = [];
  for (const [name, t] of Object.entries(tools ?? {})) {
    if (!isToolEntry(t)) continue;
    const fn = { name };
    if (typeof t === "object" && typeof t.description === "string") fn.description = t.description;
    fn.parameters = typeof t === "object" && t.parameters ? structuredClone(t.parameters) : { type: "object" };
    out.push({ type: "function", function: fn });
  }
  return out;
}

// toolChoiceOf is chat.toolChoice as OpenAI's tool_choice: "auto", "none"
// and "required" as they are, a tool's name as {type: "function", ...},
// an object as it is; undefined when unset.
export function toolChoiceOf(choice) {
  if (choice == null || choice === "") return undefined;
  if (typeof choice === "string") {
    return ["auto", "none", "required"].includes(choice) ? choice : { type: "function", function: { name: choice } };
  }
  return structuredClone(choice);
}

// turnsOf lists what the thread shows: the reader's messages and the
// answers, with their index in the history (system and tool messages are
// not turns: a tool's result shows in the answer that used it).
export function turnsOf(messages) {
  const out = [];
  messages.forEach((m, index) => {
    if (m.role === "user" || m.role === "assistant") out.push({ role: m.role, index });
  });
  return out;
}

// roundStart is the index of the answer the last tool round goes on from:
// the first assistant message after the last user message (-1: none).
export function roundStart(messages) {
  const u = messages.findLastIndex((m) => m.role === "user");
  return messages.findIndex((m, i) => i > u && m.role === "assistant");
}
