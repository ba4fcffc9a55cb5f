// A plain page's app (app.html): an <trickle-answer> or a <trickle-chat>,
// as the query says, set up as a developer would:
//
//   ?element=answer|chat  &transport=sse|websocket  &endpoint=URL
//   &token=JWT (sent as Authorization)  &protocol=ai-sdk (the chat's)
//
// The chat declares the page's one tool, get_weather; the thread (the
// chat's messages, or the answer's message) is saved in localStorage as it
// changes and shown again on the next load, with no request. window.app
// holds the element, the tool and the calls it ran, for pairwise_test.go.
import "./node_modules/trickle-answer/index.js";

// What the page's Content-Security-Policy refused, from here on.
const violations = [];
document.addEventListener("securitypolicyviolation", (e) => violations.push(e.violatedDirective + " " + e.blockedURI));

const q = new URLSearchParams(location.search);
const kind = q.get("element") === "chat" ? "trickle-chat" : "trickle-answer";
const key = "app-thread:" + location.search;

const ran = [];
const tools = {
  get_weather: {
    description: "The current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string", description: "The city" } }, required: ["city"] },
    run: async (args) => {
      ran.push(args);
      return { city: args.city, temperature: 18, sky: "clear" };
    },
  },
};

const el = document.createElement(kind);
el.setAttribute("endpoint", q.get("endpoint") ?? "/api/chat");
if (q.get("transport")) el.setAttribute("transport", q.get("transport"));
if (q.get("protocol")) el.setAttribute("protocol", q.get("protocol"));
if (q.get("token")) el.headers = { Authorization: "Bearer " + q.get("token") };
const saved = localStorage.getItem(key);
if (kind === "trickle-chat") {
  el.tools = tools;
  el.addEventListener("trickle-chat-change", (e) => localStorage.setItem(key, JSON.stringify(e.detail.messages)));
  if (saved) el.messages = JSON.parse(saved);
} else {
  el.addEventListener("trickle-end", () => localStorage.setItem(key, JSON.stringify(el.message)));
  if (saved) el.message = JSON.parse(saved);
}
document.getElementById("app").append(el);
window.app = { el, tools, ran, restored: saved !== null, violations };
