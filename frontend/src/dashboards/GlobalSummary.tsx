import { levelLabel } from "./Badges";
import { formatCount } from "../format";
import { useGlobalMetrics } from "./queries";
import { QuerySection } from "./SectionError";
import { SnapshotSummary, SummaryItem } from "./SnapshotSummary";

/** The workspace's totals (leads only). */
export function GlobalSummary() {
  return (
    <QuerySection
      query={useGlobalMetrics()}
      loading="Loading workspace totals…"
      title="Could not load the workspace totals"
      what="Workspace totals"
    >
      {(g) => {
        const levels = Object.entries(g.levels ?? {})
          .map(([level, n]) => `${formatCount(n)} ${levelLabel(level)}`)
          .join(", ");
        return (
          <SnapshotSummary
            label="Workspace totals"
            snapshot={g}
            before={
              <>
                <SummaryItem term="Workflows">
                  {formatCount(g.workflows)}
                  {levels ? <span className="cell-note">{levels}</span> : null}
                </SummaryItem>
                <SummaryItem term="AUTO-ready workflows">{formatCount(g.auto_ready_workflows)}</SummaryItem>
              </>
            }
          />
        );
      }}
    </QuerySection>
  );
}
