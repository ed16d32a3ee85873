/** A replay as the server answers it, for the tests of the regions and the policy rule form. */
import type { Replay } from "./api";

const tally = (over: Partial<Replay["asked"]> = {}) => ({
  calls: 0, accepted: 0, corrected: 0, rejected: 0, manual: 0, skipped: 0, ...over,
});

export const REPLAY: Replay = {
  calls: 10, limit: 500, in_region: 6, evidence: false,
  unattended: tally({ calls: 6, accepted: 5, rejected: 1 }),
  denied: tally(),
  asked: tally({ calls: 4, rejected: 4 }),
  links: [{ decision: "reject", path: "/executions/ex-7", execution_id: "ex-7", created_at: "2026-11-02T10:00:00+00:00",
            decision_id: "d-7" }],
  links_left_off: 0,
  condition_failed: { calls: 0, first_error: null },
};
