// React 19 JSX with the package's typings (tsc, make test-js).
import type {} from "trickle-answer/react";
import type { TrickleAnswer, TrickleChat, TrickleChatChangeDetail, TrickleEndDetail } from "trickle-answer";
import { useRef } from "react";

export function Answer() {
  const ref = useRef<TrickleAnswer>(null);
  const onEnd = (e: CustomEvent<TrickleEndDetail>) => {
    const s: "complete" | "stopped" | "incomplete" | "failed" = e.detail.status;
    return s;
  };
  return (
    <trickle-answer
      ref={ref}
      endpoint="/api/chat"
      transport="websocket"
      announce="sentences"
      show-metrics
      className="answer"
      ontrickle-end={onEnd}
      ontrickle-first-token={(e) => e.detail.ttft_ms}
    />
  );
}

// @ts-expect-error an unknown transport
export const badTransport = <trickle-answer transport="carrier-pigeon" />;

// @ts-expect-error trickle-end's detail is no string
export const badHandler = <trickle-answer ontrickle-end={(e: CustomEvent<string>) => e.detail} />;

// @ts-expect-error camel case: React 19 would listen for an event named "TrickleEnd", which never comes
export const camelCase = <trickle-answer onTrickleEnd={() => {}} />;

export function Chat() {
  const ref = useRef<TrickleChat>(null);
  return (
    <trickle-chat
      ref={ref}
      endpoint="/api/chat"
      image-origins="https://images.example"
      ws-endpoint="wss://relay.example/v1/ws"
      show-metrics
      speak
      ontrickle-chat-change={(e: CustomEvent<TrickleChatChangeDetail>) => e.detail.messages.length}
      ontrickle-end={(e) => e.detail.status}
    />
  );
}

// @ts-expect-error the chat forwards image-origins; there is no "images"
export const oldName = <trickle-chat images="https://images.example" />;

// @ts-expect-error an unknown transport
export const badChatTransport = <trickle-chat transport="carrier-pigeon" />;
