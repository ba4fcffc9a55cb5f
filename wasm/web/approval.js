// Tools that ask first: a chat.tools entry with needsApproval (true, or a
// function of the call's arguments) runs only once the reader approves
// the call. The turn shows the call, its arguments and Approve / Deny;
// focus moves to Approve (the conversation waits on the reader, so the
// question comes to them, and a screen reader says the group's name and
// the button), and the answer goes back to the composer. Denied, the call
// never runs: the model gets the refusal as the tool's result.
// test/chat.test.js holds its tests (a chat that asks, approves and denies).

import { STR_CHAT_APPROVE, STR_CHAT_APPROVED, STR_CHAT_APPROVE_ASK, STR_CHAT_DENIED, STR_CHAT_DENY } from "./contract.js";
import { wordOf } from "./strings.js";

// needsApproval says whether a call of tool t with args must ask first: a
// needsApproval of true, or a function of the arguments (and the call)
// that returns or resolves to true. A function that throws asks: when in
// doubt, the reader decides.
export async function needsApproval(t, args, call) {
  const n = t && typeof t === "object" ? t.needsApproval : undefined;
  if (typeof n === "function") {
    try {
      return (await n(args, call)) === true;
    } catch {
      return true;
    }
  }
  return n === true;
}

// askApproval shows the question after el (the answer that made the
// call), in host's words, and resolves true (approved) or false (denied).
// signal, when it aborts (the reader stopped the chat), denies. done runs
// after the reader answered (the chat puts focus back in its composer).
export function askApproval(host, el, call, { signal, done } = {}) {
  const say = (key) => wordOf(host, key).replaceAll("{name}", call.name);
  const box = document.createElement("div");
  box.dataset.trickleChat = "approval";
  box.setAttribute("role", "group");
  const q = document.createElement("p");
  q.dataset.trickleChat = "approval-question";
  q.id = `trickle-approval-${call.id || Math.random().toString(36).slice(2)}`.replace(/[^\w-]/g, "_");
  q.textContent = say(STR_CHAT_APPROVE_ASK);
  box.setAttribute("aria-labelledby", q.id);
  const pre = document.createElement("pre");
  const code = document.createElement("code");
  code.textContent = JSON.stringify(call.arguments ?? {}, null, 2);
  pre.append(code);
  const yes = document.createElement("button");
  yes.type = "button";
  yes.dataset.trickleChat = "approve";
  yes.textContent = wordOf(host, STR_CHAT_APPROVE);
  const no = document.createElement("button");
  no.type = "button";
  no.dataset.trickleChat = "deny";
  no.textContent = wordOf(host, STR_CHAT_DENY);
  const actions = document.createElement("div");
  actions.dataset.trickleChat = "approval-actions";
  actions.append(yes, " ", no);
  box.append(q, pre, actions);
  el.after(box);
  yes.focus();
  return new Promise((resolve) => {
    const answer = (ok) => {
      signal?.removeEventListener("abort", onAbort);
      // The question becomes what was decided, said once: the line is a
      // status for the moment it changes.
      const note = document.createElement("p");
      note.dataset.trickleChat = "approval-result";
      note.setAttribute("role", "status");
      note.textContent = say(ok ? STR_CHAT_APPROVED : STR_CHAT_DENIED);
      actions.replaceWith(note);
      box.dataset.decision = ok ? "approved" : "denied";
      resolve(ok);
      done?.();
    };
    const onAbort = () => answer(false);
    if (signal?.aborted) return answer(false);
    signal?.addEventListener("abort", onAbort, { once: true });
    yes.addEventListener("click", () => answer(true), { once: true });
    no.addEventListener("click", () => answer(false), { once: true });
  });
}
