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
      default:
        return { role: m.role, content: m.content };
    }
  };
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
