/// <reference types="node" />
/**
 * src/api/schema.d.ts is generated from src/api/openapi.json, the server's document (tests/api/test_contract.py checks
 * that one): it must be exactly what openapi-typescript makes of it, so that the web app's types are the server's.
 * `make api-types` writes both again.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const frontend = process.cwd(); // Vitest runs in frontend/ (npm test, npx vitest)
const cli = join(frontend, "node_modules", "openapi-typescript", "bin", "cli.js");

/** The arguments of package.json's `gen:api` (what `make api-types` runs) but the output file: stdout instead. */
function genApiArguments(): string[] {
  const scripts = JSON.parse(readFileSync(join(frontend, "package.json"), "utf8")).scripts as Record<string, string>;
  const words = scripts["gen:api"].split(/\s+/).slice(1); // without the command's name
  const output = words.indexOf("-o");
  return output < 0 ? words : [...words.slice(0, output), ...words.slice(output + 2)];
}

describe("the generated API types", () => {
  it("are openapi-typescript's output for the checked-in OpenAPI document", () => {
    const generated = execFileSync(process.execPath, [cli, ...genApiArguments()], {
      cwd: frontend,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    });
    const checkedIn = readFileSync(join(frontend, "src", "api", "schema.d.ts"), "utf8");
    // a boolean, not the two texts: a drift would print some 6,000 lines twice
    expect(generated === checkedIn, "src/api/schema.d.ts is stale: run `make api-types`").toBe(true);
  }, 60_000);
});
