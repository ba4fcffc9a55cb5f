// Vue 3's GlobalComponents with the package's typings (tsc, make test-js).
import type {} from "trickle-answer/vue";
import type { GlobalComponents } from "vue";
import type { TrickleEndDetail } from "trickle-answer";

type Props = InstanceType<GlobalComponents["trickle-answer"]>["$props"];

export const props: Props = {
  endpoint: "/api/chat",
  dialect: "anthropic",
  onTrickleEnd: (e: CustomEvent<TrickleEndDetail>) => console.log(e.detail.status),
};

// @ts-expect-error an unknown dialect
export const bad: Props = { dialect: "klingon" };

type ChatProps = InstanceType<GlobalComponents["trickle-chat"]>["$props"];

export const chatProps: ChatProps = {
  "image-origins": "https://images.example",
  onTrickleChatChange: (e) => console.log(e.detail.messages.length),
  onTrickleEnd: (e: CustomEvent<TrickleEndDetail>) => console.log(e.detail.status),
};

// @ts-expect-error an unknown dialect
export const badChat: ChatProps = { dialect: "klingon" };
