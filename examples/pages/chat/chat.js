// The chat page: one <trickle-chat> does the conversation; this wires a
// client-side tool, saves the thread in localStorage after every turn and
// sets it again on load (shown at once, no request), and starts a new chat.
import { setStatus } from "../common.js";

const KEY = "trickle-example-chat";
const chat = document.getElementById("chat");
const pill = document.getElementById("status");
const saved = document.getElementById("saved");

// get_weather is the page's tool, declared as a real model needs it (a
// description and a JSON Schema for its arguments; every request carries
// it as OpenAI's tools): the model calls it for a question about the
// weather and answers with what it returned.
chat.tools = {
  get_weather: {
    description: "The current weather in a place.",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "City and country, e.g. Lyon, France" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["location"],
      additionalProperties: false,
    },
    run: async ({ location = "somewhere", unit = "celsius" } = {}) => ({
      location,
      temperature: unit === "fahrenheit" ? 64 : 18,
      unit,
      conditions: "light rain, clearing by evening",
    }),
  },
};

const refresh = () => {
  const n = chat.messages.length;
  saved.textContent = n ? `${n} messages saved in this browser.` : "";
};

chat.addEventListener("trickle-start", () => setStatus(pill, "streaming"));
chat.addEventListener("trickle-end", (e) => setStatus(pill, e.detail?.status ?? "idle"));
chat.addEventListener("trickle-chat-change", () => {
  localStorage.setItem(KEY, JSON.stringify(chat.messages));
  refresh();
});

document.getElementById("transport").addEventListener("change", (e) => {
  chat.setAttribute("transport", e.target.value);
});
document.getElementById("clear").addEventListener("click", () => {
  chat.stop();
  chat.messages = [];
  localStorage.removeItem(KEY);
  setStatus(pill, "idle");
  refresh();
});

await customElements.whenDefined("trickle-chat");
try {
  const stored = JSON.parse(localStorage.getItem(KEY) ?? "[]");
  if (Array.isArray(stored) && stored.length) chat.messages = stored;
} catch {
  localStorage.removeItem(KEY); // a thread this page cannot read: start afresh
}
refresh();
document.body.dataset.ready = "true";
