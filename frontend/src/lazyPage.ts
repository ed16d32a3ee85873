import { createElement, lazy, useState, type ComponentType, type ReactElement } from "react";

type PageModule = { default: ComponentType };

/** A page in its own chunk that can be fetched before it is rendered (`preload`). */
export interface LazyPage {
  (): ReactElement;
  /** Starts fetching the page's chunk (once); resolves when it is loaded. */
  preload(): Promise<PageModule>;
}

/**
 * `React.lazy` with a `preload()`: the page's chunk can be fetched while something else is awaited (the session
 * check on a page load), and a page whose chunk is already here renders at once instead of suspending. With
 * React.lazy alone, even a loaded chunk suspends on the first render, and React then holds the page back behind
 * the "Loading page…" fallback for a while (it throttles the reveal of suspended content).
 */
export function lazyPage(load: () => Promise<PageModule>): LazyPage {
  let loaded: ComponentType | null = null;
  let loading: Promise<PageModule> | null = null;
  const preload = () => {
    loading ??= load().then(
      (module) => {
        loaded = module.default;
        return module;
      },
      (error: unknown) => {
        loading = null; // a later render tries again
        throw error;
      },
    );
    return loading;
  };
  const Suspending = lazy(preload);
  function Page(): ReactElement {
    // chosen once per mount: switching from the lazy wrapper to the component would mount the page anew
    const [Component] = useState<ComponentType>(() => loaded ?? Suspending);
    return createElement(Component);
  }
  return Object.assign(Page, { preload });
}
