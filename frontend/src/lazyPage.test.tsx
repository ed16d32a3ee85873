import { render, screen } from "@testing-library/react";
import { Suspense, type ComponentType } from "react";
import { describe, expect, it } from "vitest";
import { lazyPage } from "./lazyPage";

const inSuspense = (Page: ComponentType) =>
  render(
    <Suspense fallback={<p>Loading page…</p>}>
      <Page />
    </Suspense>,
  );

describe("lazyPage", () => {
  it("loads a page's chunk once, and renders a preloaded page at once, without the fallback", async () => {
    let loads = 0;
    const Page = lazyPage(async () => {
      loads += 1;
      return { default: () => <p>The page</p> };
    });
    await Promise.all([Page.preload(), Page.preload()]);

    inSuspense(Page);

    expect(screen.getByText("The page")).toBeInTheDocument();
    expect(screen.queryByText("Loading page…")).not.toBeInTheDocument();
    expect(loads).toBe(1);
  });

  it("shows the fallback while a page not preloaded loads, then the page", async () => {
    const Page = lazyPage(async () => ({ default: () => <p>The page</p> }));

    inSuspense(Page);

    expect(screen.getByText("Loading page…")).toBeInTheDocument();
    expect(await screen.findByText("The page")).toBeInTheDocument();
  });

  it("asks for a chunk again after a preload that failed", async () => {
    let loads = 0;
    const Page = lazyPage(async () => {
      loads += 1;
      if (loads === 1) throw new Error("offline");
      return { default: () => <p>The page</p> };
    });
    await expect(Page.preload()).rejects.toThrow("offline");

    inSuspense(Page);

    expect(await screen.findByText("The page")).toBeInTheDocument();
    expect(loads).toBe(2);
  });
});
