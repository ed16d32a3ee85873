import { render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import App, { createQueryClient } from "./App";
import { WORKSPACE_STORAGE_KEY } from "./api/client";
import { queueItem } from "./coaching/testFixtures";
import { startPageLoad } from "./preload";
import { startSessionCheck } from "./auth/AuthProvider";
import { PAGE_FILES_ID, firstReadPaths, forgetEarlyReads, startEarlyReads } from "./earlyReads";
import { emptyPage, renderApp, setCookie, stubSignedInFetch, stubSignedOutFetch } from "./test/auth";
import { headersOf, jsonResponse } from "./test/utils";

const QUEUE = "/api/coaching/queue?page=1&per_page=50";
const FIRST_READS = [QUEUE, "/api/coaching/questions?per_page=50", "/api/approvals?status=pending&per_page=100",
  "/api/workflows?per_page=200"];

/** A fresh page load of `route`: what main.tsx does, then the app. */
function loadPage(route: string) {
  window.history.replaceState(null, "", route);
  document.title = "Coach";
  const queryClient = createQueryClient(); // the app's own settings: a fresh answer is not asked for again
  startPageLoad(queryClient, window.location);
  return {
    queryClient,
    render: () => render(<App queryClient={queryClient} />),
  };
}

const queueServer = () =>
  stubSignedInFetch((call) => (call.url === QUEUE ? jsonResponse({ ...emptyPage, items: [queueItem()], total: 1 }) : jsonResponse(emptyPage)));

describe("a page load", () => {
  it("checks the session and makes the queue's first reads at once, and the queue shows them without asking again", async () => {
    setCookie("coach_csrf", "token"); // a returning user…
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "1"); // …who worked in workspace 1
    const { calls } = queueServer();

    const page = loadPage("/queue");
    // before the first render
    expect(calls.map((c) => c.url)).toEqual(["/api/auth/me", ...FIRST_READS]);
    page.render();

    await waitFor(() => expect(document.title).toBe("(1) Queue · Coach"));
    for (const url of ["/api/auth/me", ...FIRST_READS]) {
      expect(calls.filter((c) => c.url === url), url).toHaveLength(1);
    }
  });

  it("drops the reads made for a workspace the user is no longer in, and reads the one the session settles on", async () => {
    setCookie("coach_csrf", "token");
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "9"); // left since
    const { calls } = queueServer();

    loadPage("/queue").render();

    await waitFor(() => expect(document.title).toBe("(1) Queue · Coach"));
    const queueReads = calls.filter((c) => c.url === QUEUE);
    expect(queueReads.map((c) => headersOf(c)["X-Coach-Workspace"])).toEqual(["9", "1"]);
  });

  it("only checks the session of a visitor without one", async () => {
    const { calls } = stubSignedOutFetch();

    loadPage("/queue").render();

    expect(await screen.findByLabelText("Email")).toBeInTheDocument();
    expect(calls.map((c) => c.url)).toEqual(["/api/auth/me"]);
  });

  it("can start the same first reads before the app's code runs, and the app takes their answers instead of asking again", async () => {
    setCookie("coach_csrf", "token");
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "1");
    const { calls } = queueServer();
    window.history.replaceState(null, "", "/queue");
    try {
      startEarlyReads(window.location); // what the earlyReads entry does as index.html loads it
      expect(calls.map((c) => c.url)).toEqual(["/api/auth/me", ...FIRST_READS]);
      expect(calls.map((c) => headersOf(c)["X-Coach-Workspace"])).toEqual([undefined, "1", "1", "1", "1"]);

      loadPage("/queue").render();

      await waitFor(() => expect(document.title).toBe("(1) Queue · Coach"));
      for (const url of ["/api/auth/me", ...FIRST_READS]) {
        expect(calls.filter((c) => c.url === url), url).toHaveLength(1);
      }
    } finally {
      forgetEarlyReads();
    }
  });

  it("preloads the files of the page it lands on, as index.html names them, without running them", () => {
    const files = document.createElement("script");
    files.type = "application/json";
    files.id = PAGE_FILES_ID;
    files.textContent = JSON.stringify({ queue: ["/assets/QueuePage-1.js", "/assets/queue-2.css"], coach: ["/assets/CoachingPage-3.js"] });
    document.head.appendChild(files);
    stubSignedInFetch();
    setCookie("coach_csrf", "token");
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "1");
    try {
      startEarlyReads({ pathname: "/queue", search: "" });
      const links = [...document.head.querySelectorAll("link")].map((l) => [l.rel, l.getAttribute("href")]);
      expect(links).toEqual([["modulepreload", "/assets/QueuePage-1.js"], ["stylesheet", "/assets/queue-2.css"]]);
    } finally {
      forgetEarlyReads();
      files.remove();
      document.head.querySelectorAll("link").forEach((l) => l.remove());
    }
  });

  it("starts early the very reads the coaching panel's page load makes", async () => {
    setCookie("coach_csrf", "token");
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "1");
    // the execution is not there: the page shows that, and its shell (the account bar) stays
    const { calls } = stubSignedInFetch((call) =>
      call.url.startsWith("/api/executions/")
        ? jsonResponse({ error: { code: "not_found", message: "Execution not found" } }, 404)
        : jsonResponse(emptyPage),
    );

    const page = loadPage("/executions/ex%201/coach");

    expect(calls.map((c) => c.url)).toEqual(["/api/auth/me", ...firstReadPaths("/executions/ex%201/coach", "")]);
    page.render(); // takes the session check this page load started
    expect(await screen.findByRole("button", { name: "Log out" })).toBeInTheDocument();
    expect(firstReadPaths("/queue", "")).toEqual(FIRST_READS);
    expect(firstReadPaths("/queue", "?workflow=wf-1")).toEqual([]);
  });

  it("hands a signed-in answer over once the page's chunk is here, a refusal at once", async () => {
    stubSignedInFetch();
    let chunkLoaded: (value?: unknown) => void = () => undefined;
    const chunk = new Promise((resolve) => (chunkLoaded = resolve));
    let answered = false;
    const session = startSessionCheck(chunk).then(() => (answered = true));

    await new Promise((resolve) => setTimeout(resolve, 50)); // /api/auth/me has answered by now
    expect(answered).toBe(false);
    chunkLoaded();
    await session;
    expect(answered).toBe(true);
    renderApp("/queue"); // the app takes the answer (the next check asks again)
    expect(await screen.findByRole("button", { name: "Log out" })).toBeInTheDocument();
  });

  it("hands a refusal over without waiting for the page's chunk", async () => {
    stubSignedOutFetch();
    const never = new Promise(() => undefined);

    await expect(startSessionCheck(never)).rejects.toMatchObject({ status: 401 });
    renderApp("/queue");
    expect(await screen.findByLabelText("Email")).toBeInTheDocument();
  });
});
