// <trickle-answer> in a React 19 app: the package's entry defines it, its
// React typings type its attributes and events, and React 19 binds
// ontrickle-end as a listener for the element's trickle-end event.
import { useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import "trickle-answer";
import type {} from "trickle-answer/react";
import type { TrickleAnswer, TrickleEndDetail } from "trickle-answer";

declare global {
  interface Window {
    camelCaseCalls?: number;
  }
}

// What React 19 does with the camel-case spelling: it listens for the event
// named after "on" exactly as written, "TrickleEnd", which the element never
// dispatches. The typings refuse it, so it is spread in untyped here, for
// frameworks_test.go to show which event it listens for.
const camelCase = {
  onTrickleEnd: () => {
    window.camelCaseCalls = (window.camelCaseCalls ?? 0) + 1;
  },
} as object;

function App() {
  const answer = useRef<TrickleAnswer>(null);
  const [status, setStatus] = useState("");
  useEffect(() => {
    answer.current?.ask("Hello from React");
  }, []);
  return (
    <main>
      <trickle-answer
        ref={answer}
        endpoint="/api/chat"
        ontrickle-end={(e: CustomEvent<TrickleEndDetail>) => setStatus(e.detail.status)}
        {...camelCase}
      />
      <p id="status">{status}</p>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
