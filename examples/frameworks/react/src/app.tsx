// A React 19 + TypeScript app (app.html) with a <trickle-answer> or a
// <trickle-chat>, as the query says, set up as a developer would, for
// pairwise_test.go: the same query and behaviour as ../plain/app.js, in
// JSX with the package's typings, under the Content-Security-Policy the
// README documents.
//
//   ?element=answer|chat  &transport=sse|websocket  &endpoint=URL
//   &token=JWT (sent as Authorization)  &protocol=ai-sdk (the chat's)
import { useEffect, useRef } from "react";
import { createRoot } from "react-dom/client";
import "trickle-answer";
import type {} from "trickle-answer/react";
import type { TrickleAnswer, TrickleChat, TrickleChatTool, TrickleChatChangeDetail } from "trickle-answer";

declare global {
  interface Window {
    app?: { el: HTMLElement; tools: Record<string, TrickleChatTool>; ran: unknown[]; restored: boolean; violations: string[] };
  }
}

const q = new URLSearchParams(location.search);
const key = "app-thread:" + location.search;
const transport = q.get("transport") === "websocket" ? "websocket" : "sse";
const endpoint = q.get("endpoint") ?? "/api/chat";
const headers: Record<string, string> = q.get("token") ? { Authorization: "Bearer " + q.get("token") } : {};
const saved = localStorage.getItem(key);

// What the page's Content-Security-Policy refused, from here on.
const violations: string[] = [];
document.addEventListener("securitypolicyviolation", (e) => violations.push(e.violatedDirective + " " + e.blockedURI));

const ran: unknown[] = [];
const tools: Record<string, TrickleChatTool> = {
  get_weather: {
    description: "The current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string", description: "The city" } }, required: ["city"] },
    run: async (args) => {
      ran.push(args);
      return { city: args.city, temperature: 18, sky: "clear" };
    },
  },
};

function Chat() {
  const chat = useRef<TrickleChat>(null);
  useEffect(() => {
    const c = chat.current!;
    c.headers = headers;
    c.tools = tools;
    if (saved) c.messages = JSON.parse(saved);
    window.app = { el: c, tools, ran, restored: saved !== null, violations };
  }, []);
  return (
    <trickle-chat
      ref={chat}
      endpoint={endpoint}
      transport={transport}
      protocol={q.get("protocol") === "ai-sdk" ? "ai-sdk" : "openai"}
      ontrickle-chat-change={(e: CustomEvent<TrickleChatChangeDetail>) => localStorage.setItem(key, JSON.stringify(e.detail.messages))}
    />
  );
}

function Answer() {
  const answer = useRef<TrickleAnswer>(null);
  useEffect(() => {
    const a = answer.current!;
    a.headers = headers;
    if (saved) a.message = JSON.parse(saved);
    window.app = { el: a, tools, ran, restored: saved !== null, violations };
  }, []);
  return (
    <trickle-answer
      ref={answer}
      endpoint={endpoint}
      transport={transport}
      ontrickle-end={() => localStorage.setItem(key, JSON.stringify(answer.current!.message))}
    />
  );
}

createRoot(document.getElementById("root")!).render(<main>{q.get("element") === "chat" ? <Chat /> : <Answer />}</main>);
