// The element's types as a page's TypeScript sees them (tsc, make test-js).
// Each @ts-expect-error is a misuse the types must refuse.
import { TrickleAnswer, ready, stats, type TrickleFinalStatus } from "trickle-answer";

export async function use(): Promise<TrickleFinalStatus> {
  const el = document.querySelector("trickle-answer");
  if (!el) throw new Error("no element");
  const same: TrickleAnswer = el; // HTMLElementTagNameMap
  same.headers = { Authorization: "Bearer x" };
  el.highlighter = (code, lang) => `<span class="${lang}">${code}</span>`;
  el.math = (tex, { display }) => `<math${display ? ' display="block"' : ""}><mi>${tex}</mi></math>`;
  el.diagram = async (lang, source) => `<svg><text>${lang}: ${source}</text></svg>`;
  el.diagramLanguages = ["mermaid", "dot"];
  // @ts-expect-error the converter's options are an object, not a flag
  el.math = (tex: string, display: boolean) => tex + String(display);
  el.addEventListener("trickle-end", (e) => {
    const ttft: number = e.detail.metrics.ttft_ms;
    const thread: "worker" | "main" = e.detail.metrics.thread;
    void ttft, thread;
  });
  el.addEventListener("trickle-error", (e) => {
    const reason: "refused" | "network" | string = e.detail.reason;
    const code: number | undefined = e.detail.httpStatus;
    console.log(e.detail.message, reason, code, e.detail.detail);
  });
  TrickleAnswer.strings = { copy: "Copier", refused: "Le serveur a refusé la requête ({status})." };
  el.strings = { thinking: "Réflexion" };
  const words: string | undefined = el.strings.complete;
  void words;
  // @ts-expect-error a key the widget does not have
  TrickleAnswer.strings = { cpoy: "Copier" };
  // @ts-expect-error every word is a string
  el.strings = { retry: 1 };
  document.addEventListener("trickle-first-token", (e) => console.log(e.detail.ttfat_ms));
  const made = document.createElement("trickle-answer");
  made.setAttribute("endpoint", "/api/chat");
  await ready();
  const s = await stats();
  void s.builds;
  // @ts-expect-error ask takes a prompt or a request body, not a number
  el.ask(42);
  // @ts-expect-error status is read-only
  el.status = "complete";
  // @ts-expect-error trickle-end's detail has no "text"
  el.addEventListener("trickle-end", (e) => e.detail.text);
  el.addEventListener("trickle-tool-call", (e) => console.log(e.detail.name, e.detail.arguments, e.detail.raw));
  el.addEventListener("trickle-usage", (e) => {
    const spent: number = e.detail.usage.output_tokens;
    const counted: boolean = e.detail.usage.estimated === true && e.detail.message.incomplete;
    void spent, counted;
  });
  el.speech = { voice: "Daniel", rate: 1.2, lang: "en-GB" };
  el.speak();
  el.stopSpeaking();
  // @ts-expect-error rate is a number
  el.speech = { rate: "fast" };
  const speaking: "on" | "off" | "unavailable" | undefined = el.metrics?.speech;
  void speaking;
  const m = el.message;
  if (m) {
    const history: { role: string; content: string }[] = [{ role: m.role, content: m.content }];
    const cut: boolean = m.incomplete;
    const args: unknown = m.tool_calls[0]?.arguments;
    void history, cut, args;
    made.message = m; // show a stored answer
  }
  made.message = { content: "# Stored" };
  made.markdown = "**bold**";
  // @ts-expect-error a message to show needs its content
  made.message = { role: "assistant" };
  // @ts-expect-error a tool call's name is a string
  el.addEventListener("trickle-tool-call", (e) => { const n: number = e.detail.name; void n; });
  const chat = document.querySelector("trickle-chat");
  if (chat) {
    const onChange = (e: CustomEvent<{ messages: unknown[] }>) => console.log(e.detail.messages.length);
    chat.addEventListener("trickle-chat-change", onChange);
    chat.removeEventListener("trickle-chat-change", onChange); // an effect's clean-up
    const onEnd = (e: CustomEvent<{ status: string }>) => console.log(e.detail.status);
    chat.addEventListener("trickle-end", onEnd); // an answer's event, bubbling through its chat
    chat.removeEventListener("trickle-end", onEnd);
    // @ts-expect-error trickle-chat-change's detail has messages, not text
    chat.addEventListener("trickle-chat-change", (e) => e.detail.text);
  }
  const status = await el.ask({ messages: [{ role: "user", content: "hi" }] });
  return status;
}
