import "../admin/admin.css"; // the shared form row and the secret-shown-once box
import "./triggers.css";
import type { TriggerProps } from "./forms";
import { HooksPanel } from "./HooksPanel";
import { SchedulesPanel } from "./SchedulesPanel";

/** Start the workflow from outside: signed incoming webhooks and cron schedules (docs/triggers.md). */
export function TriggersSection(props: TriggerProps) {
  return (
    <section aria-labelledby="triggers-heading" className="triggers">
      <h2 id="triggers-heading">Triggers</h2>
      <p className="muted">
        Start {props.workflowName} from outside: another system POSTs a signed webhook, or a schedule fires. Every
        start is audited with its trigger, and the execution says what started it.
      </p>
      <HooksPanel {...props} />
      <SchedulesPanel {...props} />
    </section>
  );
}
