import { useEffect, useState } from "react";
import { errorMessage } from "../api/client";
import { EffectBadge } from "../approvals/PolicyVerdictView";
import { useAuth } from "../auth/useAuth";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { useWorkflowMetricsList } from "../dashboards/queries";
import "../dashboards/dashboards.css";
import "../approvals/approvals.css";
import { useDocumentTitle } from "../hooks";
import { DefaultsEditor } from "./DefaultsEditor";
import { DryRunForm } from "./DryRunForm";
import "./policies.css";
import { useDeleteRule, useMoveRule, usePolicies, useSaveRule } from "./queries";
import { RuleForm } from "./RuleForm";
import type { PolicyMatch, PolicyRule, PolicyScope } from "./types";

const list = (v: unknown) => (Array.isArray(v) ? v.join(", ") : String(v));

/** A rule's match in words: "tool file.write · path outside summaries/". */
export function matchSummary(match: PolicyMatch): string {
  const parts: string[] = [];
  if (match.tool) parts.push(`tool ${list(match.tool)}`);
  if (match.step_type) parts.push(`step type ${list(match.step_type)}`);
  if (match.risk) parts.push(`risk ${list(match.risk)}`);
  if (match.workflow_id) parts.push(`workflow ${list(match.workflow_id)}`);
  if (match.user) parts.push(`started by ${list(match.user)}`);
  if (match.agent_step) parts.push(`agent step ${list(match.agent_step)}`);
  if (match.agent) parts.push(`gateway agent ${list(match.agent)}`);
  if (match.sql) parts.push(match.sql === "not_read" ? "SQL that is not a read" : "SQL that is a read");
  if (match.host_not_in) parts.push(`URL host not in ${list(match.host_not_in)}`);
  if (match.path_outside) parts.push(`path outside ${match.path_outside}`);
  if (match.params) parts.push(`params: ${match.params}`);
  for (const [key, value] of Object.entries(match)) {
    if (!["tool", "step_type", "risk", "workflow_id", "user", "agent_step", "agent", "sql", "host_not_in", "path_outside", "params"].includes(key) && value != null) {
      parts.push(`${key} ${list(value)}`);
    }
  }
  return parts.length ? parts.join(" · ") : "every call";
}

/** Rules of the same scope kind compete by order; the scope kind of another rule wins or loses first. */
const scopeKind = (scope: PolicyScope) => `${scope?.user ? "user" : ""}+${scope?.workflow_id ? "workflow" : ""}`;

/**
 * Policies (leads change, everyone reads): the workspace's rules in precedence order with what each matches and
 * does, a form to create or edit one (the server's 422 on the field it names), delete with a confirmation,
 * Move up / Move down within a scope (keyboard-friendly: focus stays on the moved rule), the default per tool
 * risk, and a dry run that explains its verdict.
 */
export default function PoliciesPage() {
  useDocumentTitle("Policies");
  const { role } = useAuth();
  const canEdit = role === "lead" || role === "admin";
  const policies = usePolicies();
  const workflows = useWorkflowMetricsList();
  const workflowList = workflows.data?.items ?? [];
  const names = new Map(workflowList.map((w) => [w.workflow_id, w.name]));
  const save = useSaveRule();
  const remove = useDeleteRule();
  const move = useMoveRule();
  const [editing, setEditing] = useState<PolicyRule | "new" | null>(null);
  const [deleting, setDeleting] = useState<PolicyRule | null>(null);
  const [status, setStatus] = useState("");
  const [focusAfter, setFocusAfter] = useState<string | null>(null);
  const rules = policies.data?.items ?? [];

  // After a move or a save, put focus back where the keyboard user was, on the rule's new row: the same button,
  // or (a rule moved to the end of its scope) the one that moves it back.
  useEffect(() => {
    if (!focusAfter || move.isPending || policies.isFetching) return;
    const element = document.getElementById(focusAfter) as HTMLButtonElement | null;
    const opposite = focusAfter.endsWith("-up") ? focusAfter.replace(/-up$/, "-down") : focusAfter.replace(/-down$/, "-up");
    const fallback = document.getElementById(opposite) as HTMLButtonElement | null;
    const target = element && !element.disabled ? element : fallback && !fallback.disabled ? fallback : element?.closest("tr")?.querySelector("button");
    if (target) {
      target.focus();
      setFocusAfter(null);
    }
  }, [policies.data, policies.isFetching, move.isPending, focusAfter]);

  const scopeText = (scope: PolicyScope) => {
    const wf = scope?.workflow_id ? `workflow ${names.get(scope.workflow_id) ?? scope.workflow_id}` : "";
    if (scope?.user && wf) return `${scope.user} in ${wf}`;
    if (scope?.user) return `user ${scope.user}`;
    return wf || "workspace";
  };

  const moveRule = (index: number, direction: "up" | "down") => {
    const rule = rules[index];
    const neighbour = rules[direction === "up" ? index - 1 : index + 1];
    if (!rule || !neighbour || move.isPending) return;
    setStatus("");
    move.mutate(
      { rule, neighbour, direction },
      {
        onSuccess: () => {
          setStatus(`Moved “${rule.name}” ${direction === "up" ? "before" : "after"} “${neighbour.name}”.`);
          setFocusAfter(`rule-${rule.id}-${direction}`);
        },
      },
    );
  };

  return (
    <section aria-labelledby="policies-heading" className="lead-page policies">
      <div className="page-head">
        <h1 id="policies-heading">Policies</h1>
        {canEdit && editing === null ? (
          <button type="button" className="button" onClick={() => { save.reset(); setEditing("new"); }}>
            New rule
          </button>
        ) : null}
      </div>
      <p className="lead">
        Each tool call is allowed, waits for a person's review, or is denied. Among the rules that match a call, the
        most specific scope wins (user and workflow, user, workflow, workspace), then the lowest order, then the
        oldest rule. When none matches, the workspace default for the tool's risk applies.
        {canEdit ? null : " You can read the rules; leads change them."}
      </p>
      <p role="status" className="muted">
        {status}
      </p>
      {move.isError ? (
        <p role="alert" className="notice notice--error">
          Could not move the rule: {errorMessage(move.error)}
        </p>
      ) : null}
      {remove.isError ? (
        <p role="alert" className="notice notice--error">
          Could not delete the rule: {errorMessage(remove.error)}
        </p>
      ) : null}

      {editing !== null ? (
        <section className="card" aria-labelledby="rule-form-heading">
          <h2 id="rule-form-heading">{editing === "new" ? "New rule" : `Edit rule: ${editing.name}`}</h2>
          <RuleForm
            key={editing === "new" ? "new" : editing.id}
            rule={editing === "new" ? null : editing}
            workflows={workflowList}
            saving={save.isPending}
            error={save.error}
            onCancel={() => {
              setFocusAfter(editing === "new" ? null : `rule-${editing.id}-edit`);
              setEditing(null);
            }}
            onSubmit={(rule) =>
              save.mutate(
                { id: editing === "new" ? null : editing.id, rule },
                {
                  onSuccess: (savedRule) => {
                    setStatus(`${editing === "new" ? "Created" : "Saved"} the rule “${savedRule.name}”.`);
                    setFocusAfter(`rule-${savedRule.id}-edit`);
                    setEditing(null);
                  },
                },
              )
            }
          />
        </section>
      ) : null}

      <h2 id="rules-heading">Rules in precedence order</h2>
      {policies.isPending ? (
        <Loading label="Loading the rules…" />
      ) : policies.isError ? (
        <ErrorNotice title="Could not load the rules" error={policies.error} onRetry={() => void policies.refetch()} />
      ) : rules.length === 0 ? (
        <p className="empty">No rules yet: every call gets the workspace default below.</p>
      ) : (
        <div className="table-wrap">
          <table className="table policy-rules" aria-labelledby="rules-heading">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Rule</th>
                <th scope="col">Scope</th>
                <th scope="col">Effect</th>
                <th scope="col">Matches</th>
                <th scope="col">Order</th>
                {canEdit ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, i) => {
                const upOk = i > 0 && scopeKind(rules[i - 1].scope) === scopeKind(rule.scope);
                const downOk = i < rules.length - 1 && scopeKind(rules[i + 1].scope) === scopeKind(rule.scope);
                return (
                  <tr key={rule.id} data-rule-id={rule.id}>
                    <td>{i + 1}</td>
                    <th scope="row">
                      {rule.name}
                      {!rule.enabled ? <span className="tag">disabled: skipped</span> : null}
                      {rule.reason ? <div className="muted policy-rules__reason">{rule.reason}</div> : null}
                    </th>
                    <td>{scopeText(rule.scope)}</td>
                    <td>
                      <EffectBadge effect={rule.effect} />
                    </td>
                    <td className="policy-rules__match">{matchSummary(rule.match ?? {})}</td>
                    <td>{rule.order}</td>
                    {canEdit ? (
                      <td>
                        <div className="policy-rules__actions">
                          <button id={`rule-${rule.id}-edit`} type="button" className="button button--secondary button--small"
                            aria-label={`Edit ${rule.name}`} onClick={() => { save.reset(); setEditing(rule); }}>
                            Edit
                          </button>
                          <button id={`rule-${rule.id}-up`} type="button" className="button button--secondary button--small"
                            aria-label={`Move ${rule.name} up`} disabled={!upOk || move.isPending}
                            title={upOk ? undefined : "First of its scope: a more specific scope always goes first"}
                            onClick={() => moveRule(i, "up")}>
                            ↑ Move up
                          </button>
                          <button id={`rule-${rule.id}-down`} type="button" className="button button--secondary button--small"
                            aria-label={`Move ${rule.name} down`} disabled={!downOk || move.isPending}
                            title={downOk ? undefined : "Last of its scope"}
                            onClick={() => moveRule(i, "down")}>
                            ↓ Move down
                          </button>
                          <button type="button" className="button button--danger button--small"
                            aria-label={`Delete ${rule.name}`} onClick={() => setDeleting(rule)}>
                            Delete
                          </button>
                        </div>
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <div className="policies__lower">
        <section className="card">
          <DefaultsEditor canEdit={canEdit} />
        </section>
        {canEdit ? (
          <section className="card">
            <DryRunForm workflows={workflowList} />
          </section>
        ) : null}
      </div>

      {deleting ? (
        <ConfirmDialog
          title={`Delete the rule “${deleting.name}”?`}
          confirmLabel="Delete the rule"
          busy={remove.isPending}
          onCancel={() => setDeleting(null)}
          onConfirm={() =>
            remove.mutate(deleting.id, {
              onSuccess: () => setStatus(`Deleted the rule “${deleting.name}”.`),
              onSettled: () => setDeleting(null),
            })
          }
        >
          <p>Calls it matched get the next matching rule, or the workspace default, from the next call on.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
