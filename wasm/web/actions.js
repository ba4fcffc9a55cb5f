// A turn's actions in the chat's thread (thread.js): small buttons, each
// a picture and its word (visually hidden text for screen readers, and
// the tooltip), and Copy's moment of saying what it did.

import { STR_CHAT_COPY_ANSWER, STR_COPIED, STR_COPY_FAILED } from "./contract.js";

// ICONS are the action buttons' pictures: 16-unit line drawings in
// currentColor, hidden from screen readers (each button is named by its
// word). Written here, not taken from an icon set.
const ICONS = {
  copy: '<rect x="5.5" y="5.5" width="8" height="8" rx="1.5"/><path d="M10.5 3.5v-.5a1.5 1.5 0 0 0-1.5-1.5H4A1.5 1.5 0 0 0 2.5 3v5A1.5 1.5 0 0 0 4 9.5h.5"/>',
  regenerate: '<path d="M13.5 8a5.5 5.5 0 1 1-1.6-3.9"/><path d="M12.5 1.5v3h-3"/>',
  edit: '<path d="M10.5 2.5l3 3-8 8h-3v-3z"/><path d="M9 4l3 3"/>',
};

// icon is a new copy of a picture, parsed once (a restored thread makes
// one or two per turn).
const parsed = {};
function icon(name) {
  let t = parsed[name];
  if (!t) {
    t = parsed[name] = document.createElement("template");
    t.innerHTML = `<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round">${ICONS[name]}</svg>`;
  }
  return t.content.cloneNode(true);
}

/** actionButton is a turn's button part (its data-trickle-chat), named
 *  word, calling onClick(button) when pressed. */
export function actionButton(part, word, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.dataset.trickleChat = part;
  b.append(icon(part === "copy-answer" ? "copy" : part), document.createElement("span"));
  b.lastChild.dataset.trickleChat = "action-label";
  nameButton(b, word);
  b.addEventListener("click", () => onClick(b));
  return b;
}

/** nameButton sets a button's word: its text for screen readers (visually
 *  hidden) and its tooltip. */
export function nameButton(b, word) {
  b.lastChild.textContent = word;
  b.title = word;
}

/** copyAnswer puts text (an answer's markdown) on the clipboard, and says
 *  so on Copy's button b for a moment, in the words w(key) gives (its
 *  name is what a screen reader hears). */
export function copyAnswer(b, text, w) {
  const said = (key) => {
    b.dataset.copied = "";
    nameButton(b, w(key));
    setTimeout(() => {
      delete b.dataset.copied;
      nameButton(b, w(STR_CHAT_COPY_ANSWER));
    }, 2000);
  };
  Promise.resolve()
    .then(() => navigator.clipboard.writeText(text))
    .then(
      () => said(STR_COPIED),
      (err) => {
        console.error("trickle: copying the answer failed:", err);
        said(STR_COPY_FAILED);
      },
    );
}
