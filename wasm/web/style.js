// Stylesheet injection: the widget's stylesheet first in <head> (the
// page's own rules win at equal specificity), and the highlighting
// build's colours after it.

import { CSS, CSS_TEXT } from "./assets.js";
import { builds } from "./builds.js";

// addHighlightStylesheet adds the highlighting variant's colours, once
// (nothing without a highlighting build).
export function addHighlightStylesheet() {
  if (!builds.highlight || document.querySelector("link[data-trickle-highlight-css]")) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = builds.highlight.css.href;
  link.dataset.trickleHighlightCss = "";
  document.querySelector("[data-trickle-css]")?.after(link) ?? document.head.prepend(link);
}

// addStylesheet adds the widget's stylesheet once, first in <head>, so the
// page's own rules win at equal specificity: a <style> holding CSS_TEXT,
// in place before the element's parts are first laid out. A page whose
// Content-Security-Policy refuses inline styles (the <style> gets no sheet)
// gets the stylesheet's file instead.
export function addStylesheet() {
  if (document.querySelector("[data-trickle-css]")) return;
  const style = document.createElement("style");
  style.dataset.trickleCss = "";
  style.textContent = CSS_TEXT;
  document.head.prepend(style);
  if (style.sheet) return;
  style.remove();
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = CSS.href;
  link.dataset.trickleCss = "";
  document.head.prepend(link);
}

// followScheme has el follow the page's color-scheme (on :root or an
// ancestor) where the page sets one: data-trickle-scheme="inherit";
// otherwise the stylesheet's default follows the reader's preference.
export function followScheme(el) {
  const scheme = typeof getComputedStyle === "function" ? getComputedStyle(el.parentElement ?? document.documentElement).colorScheme : "";
  if (scheme && scheme !== "normal") el.dataset.trickleScheme = "inherit";
}
