import { Suspense, lazy } from "react";
import { Dialog } from "../components/Dialog";
import { Loading } from "../components/QueryState";
import { ManualDialog } from "./ManualDialog";
import { RejectDialog } from "./RejectDialog";
import { isToolCall, stepName, type DecisionKind, type Suggestion } from "./types";
import type { DecisionExtra, DialogName } from "./usePanelDecisions";

// rjsf is large: the editor is its own chunk, fetched the first time `c` is pressed.
const CorrectionEditor = lazy(() => import("./CorrectionEditor"));

/** The dialog that asks for a decision's details (reject's feedback, the manual output, the correction), if open. */
export function DecisionDialogs({
  dialog,
  suggestion,
  sending,
  serverError,
  refused,
  onDecide,
  onClearRefused,
  onClose,
}: {
  dialog: DialogName;
  suggestion: Suggestion | null;
  /** This suggestion's decision is on its way. */
  sending: boolean;
  /** The last decision's failure (a refused correction's field errors). */
  serverError: unknown;
  /** Why the server refused the manual output (413). */
  refused: string | null;
  onDecide: (kind: DecisionKind, extra: DecisionExtra) => void;
  onClearRefused: () => void;
  onClose: () => void;
}) {
  if (!suggestion) return null;
  if (dialog === "reject") {
    return (
      <RejectDialog
        suggestion={suggestion}
        sending={sending}
        onSubmit={(feedback) => onDecide("reject", { feedback })}
        onClose={onClose}
      />
    );
  }
  if (dialog === "manual") {
    return (
      <ManualDialog
        suggestion={suggestion}
        sending={sending}
        onSubmit={(output) => {
          onClearRefused();
          onDecide("manual", { manual_output: output });
        }}
        onClose={() => {
          onClearRefused();
          onClose();
        }}
        refused={refused}
      />
    );
  }
  if (dialog === "correct") {
    return (
      <Dialog
        title={
          isToolCall(suggestion)
            ? `Correct the arguments of ${suggestion.tool ?? "the call"}`
            : `Correct step ${stepName(suggestion)}`
        }
        onClose={onClose}
        wide
      >
        <Suspense fallback={<Loading label="Loading the correction editor…" />}>
          <CorrectionEditor
            suggestion={suggestion}
            sending={sending}
            serverError={serverError}
            onSubmit={(params) => onDecide("correct", { correction: params })}
            onCancel={onClose}
          />
        </Suspense>
      </Dialog>
    );
  }
  return null;
}
