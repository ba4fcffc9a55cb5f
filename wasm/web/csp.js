// The page's Content-Security-Policy refusals seen while the widget
// starts (securitypolicyviolation), so that a failure to start names the
// exact directive: "worker-src refused blob:…", "script-src refused
// wasm-eval".
const violations = [];
if (typeof document === "object" && typeof document.addEventListener === "function") {
  document.addEventListener("securitypolicyviolation", (ev) => {
    const d = ev.effectiveDirective || ev.violatedDirective || "";
    // What stops the widget from starting (a refused stylesheet does not).
    if (/^(script-src|worker-src|child-src|connect-src|default-src)/.test(d) && violations.length < 8) violations.push(`${d} refused ${ev.blockedURI || "inline"}`);
  });
}

export function refusals() {
  return violations.length > 0 ? `; the page's Content-Security-Policy refused: ${[...new Set(violations)].join(", ")}` : "";
}
