import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";
import { setCsrfToken } from "../api/client";

afterEach(() => {
  cleanup();
  // Nothing of one test's session (workspace choice, CSRF token) leaks into the next.
  window.localStorage.clear();
  for (const part of document.cookie.split(";")) {
    const name = part.split("=")[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
  setCsrfToken(null);
});
