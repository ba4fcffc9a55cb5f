// The entry with math: what index.js exports, and every formula of every
// answer rendered as MathML by temml, a small TeX to MathML converter the
// page installs beside the package (npm install temml). temml is loaded
// the first time an answer has a settled formula, never before: an answer
// without math costs nothing more. An element's own converter (el.math)
// wins over it; until temml is loaded, and if it cannot be, a formula
// stays its TeX.

import { pageMath } from "./mathml.js";

export * from "./index.js";

let temml = null;

pageMath.convert = (tex, { display }) =>
  (temml ??= import("temml")).then((m) => (m.default ?? m).renderToString(tex, { displayMode: display, throwOnError: true }));
