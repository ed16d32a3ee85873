/** A 422 answer to apply-correction, split for the step editor: the params' errors (in the shape the correction
 * editor reads) and the step's other fields' (timeout_s, retries, tool, …). */
import { ApiError } from "../api/client";
import { isPlainObject } from "../format";

const UPDATED = "correction.updated_step";

export interface StepErrors {
  /** An ApiError whose details name `correction.<param path>`, as the correction editor shows them; or null. */
  params: ApiError | null;
  /** Field (timeout_s, retries, …; "" for the step as a whole) -> messages. */
  fields: Record<string, string[]>;
}

export function splitStepErrors(error: unknown): StepErrors {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) {
    return { params: null, fields: {} };
  }
  const params: Record<string, string[]> = {};
  const fields: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(error.details)) {
    const messages = (Array.isArray(value) ? value : [value]).map(String);
    if (key === `${UPDATED}.params`) params.correction = messages;
    else if (key.startsWith(`${UPDATED}.params.`)) params[`correction.${key.slice(UPDATED.length + 8)}`] = messages;
    else if (key.startsWith(`${UPDATED}.`)) fields[key.slice(UPDATED.length + 1)] = messages;
    else fields[key === UPDATED ? "" : key] = messages;
  }
  const paramsError = Object.keys(params).length
    ? new ApiError(422, error.code, error.message, params)
    : null;
  return { params: paramsError, fields };
}
