import { ApiError } from "../api/client";
import { isPlainObject } from "../format";

/**
 * A 422's `details` as one message per dotted field name (`match.params`, `scope.workflow_id`, `effect`), whether
 * the server names them flat (core/policy) or nested (marshmallow, maybe under `json`). Empty for other errors.
 */
export function serverFieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) return {};
  const out: Record<string, string> = {};
  const walk = (value: unknown, path: string) => {
    if (isPlainObject(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
    } else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
      out[path] = value.join(" ");
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${path}[${i}]`));
    } else if (value !== undefined && value !== null) {
      out[path] = String(value);
    }
  };
  const details = error.details;
  walk(isPlainObject(details.json) ? details.json : details, "");
  return out;
}
