// React 19 JSX typings for <trickle-answer>: import type {} from
// "trickle-answer/react" once (or list it in tsconfig's "types").
//
// React 19 passes a custom element's props on: an `on` prop becomes an
// event listener for the name after "on", exactly as written, so the
// element's events are `ontrickle-end` and the like (onTrickleEnd would
// listen for an event named "TrickleEnd", which never fires).

import type { DetailedHTMLProps, HTMLAttributes } from "react";
import type { TrickleAnswer, TrickleAnswerAttributes, TrickleAnswerEventMap } from "./trickle-answer.js";

/** The element's events as React 19 props: ontrickle-start, ontrickle-end, … */
export type TrickleAnswerReactEvents = {
  [K in keyof TrickleAnswerEventMap as `on${K}`]?: (event: TrickleAnswerEventMap[K]) => void;
};

/** Everything <trickle-answer> takes in JSX. */
export type TrickleAnswerProps = DetailedHTMLProps<HTMLAttributes<TrickleAnswer>, TrickleAnswer> &
  TrickleAnswerAttributes &
  TrickleAnswerReactEvents;

declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "trickle-answer": TrickleAnswerProps;
    }
  }
}
