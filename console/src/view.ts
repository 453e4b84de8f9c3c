/**
 * What main.ts mounts: a view of the console. Its own module, so that main.ts imports the views
 * and the views import this, without an import cycle between them.
 */

/** A mounted view; `route` is called again when the hash changes within the same view. */
export interface View {
  el: HTMLElement;
  route?(parts: string[]): void;
  destroy(): void;
}
