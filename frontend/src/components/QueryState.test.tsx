import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import { ErrorNotice } from "./QueryState";

describe("ErrorNotice", () => {
  it("names the server's error code after the message", () => {
    render(<ErrorNotice title="Not resumed" error={new ApiError(409, "conflict", "step 'x' already ran")} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Not resumedstep 'x' already ranError code: conflict");
  });

  it("never shows an empty Error code line", () => {
    for (const error of [new ApiError(409, "  ", "refused"), new ApiError(409, "", "refused"), new Error("boom")]) {
      const { unmount } = render(<ErrorNotice title="Not done" error={error} />);
      expect(screen.getByRole("alert")).not.toHaveTextContent(/Error code/);
      unmount();
    }
  });
});
