// Vue 3 typings for <trickle-answer> in templates: import type {} from
// "trickle-answer/vue" once. Tell Vue's compiler it is a custom element
// (compilerOptions.isCustomElement: (tag) => tag === "trickle-answer"),
// then bind its events with @trickle-end and the like.

import type { DefineComponent } from "vue";
import type { TrickleAnswerAttributes, TrickleAnswerEventMap } from "./trickle-answer.js";

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** The element's events as Vue props: @trickle-end is onTrickleEnd. */
export type TrickleAnswerVueEvents = {
  [K in keyof TrickleAnswerEventMap as `on${Capitalize<Camel<K & string>>}`]?: (event: TrickleAnswerEventMap[K]) => void;
};

declare module "vue" {
  interface GlobalComponents {
    "trickle-answer": DefineComponent<TrickleAnswerAttributes & TrickleAnswerVueEvents>;
  }
}
