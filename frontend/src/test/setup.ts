import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach, vi } from "vitest";
import { setCsrfToken } from "../api/client";
import { FakeSocket, openedSockets } from "./fakeSocket";

// Pages are lazy chunks: on a loaded machine the first import of one can take over a second,
// Testing Library's default wait for findBy*/waitFor.
configure({ asyncUtilTimeout: 4_000 });

// No test talks to a real Socket.IO server: the app's connection is a FakeSocket
// (connected at once) that tests reach through `lastSocket()`.
vi.mock("socket.io-client", () => ({
  io: (options?: { auth?: { workspace?: string | null } }) => {
    const socket = new FakeSocket(options?.auth?.workspace ?? null);
    openedSockets.push(socket);
    queueMicrotask(() => socket.connect());
    return socket;
  },
}));

afterEach(() => {
  cleanup();
  openedSockets.length = 0;
  // Nothing of one test's session (workspace choice, CSRF token) leaks into the next.
  window.localStorage.clear();
  for (const part of document.cookie.split(";")) {
    const name = part.split("=")[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
  setCsrfToken(null);
});
