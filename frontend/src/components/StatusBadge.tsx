/**
 * An execution or step status, always as words; the colour and symbol
 * only repeat what the text says.
 */

import type { ReactNode } from "react";
import { ClockIcon } from "./ClockIcon";

const KNOWN: Record<string, { label: string; symbol: ReactNode; tone: string }> = {
  pending: { label: "Pending", symbol: "○", tone: "neutral" },
  queued: { label: "Queued", symbol: "○", tone: "neutral" },
  running: { label: "Running", symbol: "▶", tone: "info" },
  waiting: { label: "Waiting", symbol: "‖", tone: "warning" },
  paused: { label: "Paused", symbol: "‖", tone: "warning" },
  completed: { label: "Completed", symbol: "✓", tone: "success" },
  failed: { label: "Failed", symbol: "✕", tone: "danger" },
  cancelled: { label: "Cancelled", symbol: "⊘", tone: "muted" },
  skipped: { label: "Skipped", symbol: "–", tone: "muted" },
  approved: { label: "Approved", symbol: "✓", tone: "success" },
  rejected: { label: "Rejected", symbol: "✕", tone: "danger" },
  expired: { label: "Expired", symbol: "⊘", tone: "muted" },
  draft: { label: "Draft", symbol: "✎", tone: "neutral" },
  succeeded: { label: "Succeeded", symbol: "✓", tone: "success" },
  timed_out: { label: "Timed out", symbol: <ClockIcon />, tone: "warning" },
  waiting_decision: { label: "Waiting for a decision", symbol: "‖", tone: "warning" },
  waiting_clarification: { label: "Waiting for clarification", symbol: "?", tone: "warning" },
  waiting_correction: { label: "Waiting for a correction", symbol: "‖", tone: "warning" },
  waiting_approval: { label: "Waiting for approval", symbol: "‖", tone: "warning" },
  resumed: { label: "Resumed", symbol: "▶", tone: "info" },
};

export function statusLabel(status: string): string {
  const known = KNOWN[status];
  if (known) return known.label;
  const words = status.replace(/[_-]+/g, " ").trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : "Unknown";
}

export function StatusBadge({ status }: { status: string }) {
  const known = KNOWN[status];
  const tone = known?.tone ?? "neutral";
  return (
    <span className={`status status--${tone}`} data-status={status}>
      <span className="status__symbol" aria-hidden="true">
        {known?.symbol ?? "•"}
      </span>
      {statusLabel(status)}
    </span>
  );
}
