// The entry that defines <trickle-answer> and <trickle-chat>: the default
// build only (an element with the highlight attribute runs on it too,
// unless highlight.js is imported as well). In a browser it adds the stylesheet and defines
// the element; on a server (no document, no customElements) importing it
// does nothing and throws nothing. trickle.js holds the module map.

import { TrickleChat } from "./chat.js";
import { TrickleAnswer } from "./element.js";
import { addStylesheet } from "./style.js";

export { ready, stats } from "./host.js";
export { TrickleAnswer, TrickleChat };

if (typeof document === "object" && typeof customElements === "object" && typeof HTMLElement === "function") {
  addStylesheet();
  if (!customElements.get("trickle-answer")) {
    customElements.define("trickle-answer", TrickleAnswer);
  }
  if (!customElements.get("trickle-chat")) {
    customElements.define("trickle-chat", TrickleChat);
  }
}
