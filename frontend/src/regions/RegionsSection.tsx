/**
 * The regions of one tool scope, for leads (docs/autonomy.md#regions): a workflow's tool step, an agent step's calls
 * of one tool (`<agent step>:<tool>`, AgentStepRegions) or a gateway tool (its regions may hold for one agent
 * identity's calls only: the form offers the workspace's identities, or any).
 * Its regions in their order, each with its mode and its progress to AUTO-ready (decisions counted since its
 * condition was fixed, the e-value beside its threshold, the decisions still needed), and the lead's actions:
 * Promote (only when AUTO-ready; an admin may force it with a reason), Pin / Unpin, Back to coaching, Edit, Remove.
 * Below them, the regions Coach proposes from the decisions, each with its replay and "Use this", and the form
 * "Add a region", whose condition is replayed before it is saved (the Replay button, and as it is typed), so the
 * lead sees what it would have let run unattended first. Buttons and fields only: everything works with the keyboard.
 */
import { useEffect, useId, useRef, useState, type FormEvent, type RefObject } from "react";
import { errorMessage } from "../api/client";
import { Dialog } from "../components/Dialog";
import { DialogButton } from "../components/DialogButton";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog, ConfirmMutation } from "../dashboards/ConfirmDialog";
import { DataTable, type Column } from "../dashboards/DataTable";
import { ForceReason } from "../dashboards/ForceReason";
import { ModeActions } from "../dashboards/ModeActions";
import { formatCount, formatRate, plural } from "../format";
import { serverFieldErrors } from "../policies/fieldErrors";
import {
  outsideOwner,
  regionModeLabel,
  scopeName,
  useCreateRegion,
  useDeleteRegion,
  useRegions,
  useReplay,
  useSetRegionMode,
  useUpdateRegion,
  type Proposal,
  type Region,
  type RegionModeChange,
  type RegionScope,
} from "./api";
import { ReplayTable } from "./ReplayTable";
import "./regions.css";

/** How long typing pauses before the condition is replayed. */
export const REPLAY_DELAY_MS = 600;
const MAX_NAME = 120;

const number = (n: number | undefined) =>
  n === undefined ? "—" : n >= 1000 ? n.toExponential(2) : n.toFixed(n >= 10 ? 1 : 2);

const MODE_WORDS: Record<string, string> = {
  auto: "AUTO (spot checks)",
  coaching: "Coaching",
  always_review: "Always reviewed (pinned)",
};

/** Why a region may not be promoted yet, in words ("12 more decisions, all accepted"). */
export function notReadyReason(r: Region): string {
  if (r.auto_ready) return "";
  if (!r.decisions) return "Not AUTO-ready: no decision counted since its condition was fixed.";
  if (r.decisions_needed === null) return "Not AUTO-ready: no run of accepts would do now (acceptance dropped).";
  return `Not AUTO-ready: ${plural(r.decisions_needed, "more decision")}, all accepted.`;
}

function Progress({ r }: { r: Region }) {
  return (
    <span className="region-progress" data-auto-ready={r.auto_ready}>
      {plural(r.decisions, "decision")}
      {r.decisions ? <>, {formatRate(r.acceptance)} accepted</> : null}
      <br />
      <span data-statistic-met={r.e_value >= r.threshold}>
        e-value <strong>{number(r.e_value)}</strong> of the <strong>{number(r.threshold)}</strong> needed
      </span>
      <br />
      {r.auto_ready ? (
        <span className="status status--success">AUTO-ready</span>
      ) : (
        <span className="muted" data-decisions-needed={r.decisions_needed ?? ""}>
          {r.decisions_needed === null
            ? "no run of accepts would do now"
            : `${plural(r.decisions_needed, "more decision")}, all accepted`}
        </span>
      )}
    </span>
  );
}

function SpotChecks({ r }: { r: Region }) {
  if (!r.spot_checks.decisions) return <span className="muted">none</span>;
  return (
    <>
      {formatCount(r.spot_checks.decisions)}, {formatRate(r.spot_checks.acceptance)} accepted
    </>
  );
}

function RegionActions({
  r,
  onMode,
  onEdit,
  onRemove,
}: {
  r: Region;
  onMode: (c: RegionModeChange) => void;
  onEdit: () => void;
  onRemove: () => void;
}) {
  const name = `region ${r.name}`;
  return (
    <ModeActions mode={r.mode} autoReady={r.auto_ready} name={name} notReady={notReadyReason(r)}
      className="step-actions region-actions"
      onMode={(mode, force) => onMode(force ? { region: r, mode, force: true } : { region: r, mode })}>
      <DialogButton className="button button--secondary button--small" onOpen={onEdit}>
        Edit… <span className="visually-hidden">{name}</span>
      </DialogButton>
      <DialogButton className="button button--secondary button--small" onOpen={onRemove}>
        Remove… <span className="visually-hidden">{name}</span>
      </DialogButton>
    </ModeActions>
  );
}

const OUTCOME: Record<string, string> = {
  auto: "is in AUTO: its calls run unattended, with spot checks, while the others are still asked.",
  coaching: "is in coaching: its calls are asked and its decisions count.",
  always_review: "is pinned: every one of its calls is asked.",
};

/** Promote (confirmed; a forced one with a reason), Pin, Unpin, Back to coaching: the outcome and the dialog. */
function useRegionModeChanger() {
  const setMode = useSetRegionMode();
  const [asked, setAsked] = useState<RegionModeChange | null>(null);
  const [reason, setReason] = useState("");
  const [missing, setMissing] = useState(false);
  const run = (c: RegionModeChange) => setMode.mutate(c, { onSettled: () => setAsked(null) });
  const change = (c: RegionModeChange) => {
    setMode.reset();
    setReason("");
    setMissing(false);
    if (c.mode === "auto") setAsked(c);
    else run(c);
  };
  const confirm = (c: RegionModeChange) => {
    if (c.force && !reason.trim()) {
      setMissing(true);
      document.getElementById("force-reason")?.focus();
      return;
    }
    run(c.force ? { ...c, reason: reason.trim() } : c);
  };
  const done = setMode.variables;
  const ui = (
    <>
      <div className="mode-outcome" role="status">
        {setMode.isSuccess && done ? `Region “${done.region.name}” ${OUTCOME[done.mode] ?? ""}` : null}
      </div>
      {setMode.isError && done ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">
            Could not set region “{done.region.name}” to {regionModeLabel(done.mode)}
          </p>
          <p>{errorMessage(setMode.error)}</p>
        </div>
      ) : null}
      {asked ? (
        <ConfirmDialog
          title={`${asked.force ? "Force" : "Promote"} region “${asked.region.name}” ${asked.force ? "into" : "to"} AUTO?`}
          confirmLabel={asked.force ? "Force the region into AUTO" : "Promote the region"}
          busy={setMode.isPending}
          onConfirm={() => confirm(asked)}
          onCancel={() => setAsked(null)}
        >
          <p>
            The calls where <code>{asked.region.when}</code> holds will run unattended, with a sample of spot checks,
            while the other calls are still asked. Rejected spot checks set the region back to coaching; policy rules
            still deny or hold what they say.
          </p>
          {asked.force ? (
            <>
              <p className="dialog__warning">{notReadyReason(asked.region)} As an admin you may overrule its evidence.</p>
              <ForceReason value={reason} missing={missing}
                onChange={(v) => { setReason(v); if (v.trim()) setMissing(false); }} />
            </>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
  return { change, ui };
}

/** The replay of `when` as it is typed (after a pause) or when the lead presses Replay. */
function useLiveReplay(scope: RegionScope, when: string, identity: string | null) {
  const [replayed, setReplayed] = useState("");
  useEffect(() => {
    // an emptied field (the region was added, or the text erased) leaves no replay behind, at once
    if (!when.trim()) return setReplayed("");
    const timer = setTimeout(() => setReplayed(when.trim()), REPLAY_DELAY_MS);
    return () => clearTimeout(timer);
  }, [when]);
  const replay = useReplay(scope, replayed, identity);
  const now = () => {
    if (replayed === when.trim()) void replay.refetch();
    else setReplayed(when.trim());
  };
  return { replay, replayed, now };
}

/** A replay's answer, or what stops it: the server's 422 goes beside the condition instead (`conditionError`). */
function ReplayResult({ replay, replayed }: { replay: ReturnType<typeof useReplay>; replayed: string }) {
  if (!replayed) return <p className="muted">Write a condition to see what it would have done to the latest decided calls.</p>;
  if (replay.isPending) return <Loading label="Replaying the latest decided calls…" />;
  if (replay.isError && Object.keys(serverFieldErrors(replay.error)).length === 0)
    return <ErrorNotice title="Could not replay the condition" error={replay.error} />;
  if (!replay.data || replay.isError) return null;
  return (
    <>
      {replay.isPlaceholderData || replay.isFetching ? <p className="muted">Replaying the new condition…</p> : null}
      <ReplayTable replay={replay.data} subject={`the condition ${replayed}`} />
    </>
  );
}

/** The message for `field` of a 422 (`when`, `name`, `order`), or of the replay's for `when`. */
function fieldError(error: unknown, field: string): string | undefined {
  return serverFieldErrors(error)[field];
}

/** A proposal's name for the form: its explanation up to the figures ("refund calls with amount ≤ 200"). */
export function proposalName(p: Proposal): string {
  const head = p.explanation.split(":")[0].trim() || p.when;
  return head.length > MAX_NAME ? `${head.slice(0, MAX_NAME - 1)}…` : head;
}

interface FormState {
  name: string;
  when: string;
  mode: "coaching" | "always_review";
  /** A gateway tool's region: "" for every agent identity's calls, else one identity's name. */
  identity: string;
}

const EMPTY: FormState = { name: "", when: "", mode: "coaching", identity: "" };

/** The choice of agent identity of a gateway tool's region: any, or one of the workspace's (and the current one). */
function IdentityField({
  id,
  value,
  identities,
  onChange,
  error,
}: {
  id: string;
  value: string;
  identities: string[];
  onChange: (v: string) => void;
  /** The server's message for `identity` (a 422). */
  error?: string;
}) {
  const names = value && !identities.includes(value) ? [...identities, value] : identities;
  return (
    <div className="field">
      <label htmlFor={`${id}-identity`}>Agent identity</label>
      <select id={`${id}-identity`} value={value} aria-invalid={error ? true : undefined}
        aria-describedby={[`${id}-identity-hint`, error ? `${id}-identity-error` : ""].filter(Boolean).join(" ")}
        onChange={(e) => onChange(e.target.value)}>
        <option value="">Any agent identity</option>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
            {identities.includes(n) ? "" : " (revoked)"}
          </option>
        ))}
      </select>
      <small id={`${id}-identity-hint`} className="muted">
        {names.length
          ? "Any: the region holds for every agent's calls; one identity: for its calls only."
          : "No agent identity yet: an admin makes them on the Tools page."}
      </small>
      {error ? (
        <small id={`${id}-identity-error`} className="field-error" role="alert">
          ✕ Agent identity: {error}
        </small>
      ) : null}
    </div>
  );
}

function AddRegionForm({
  scope,
  form,
  setForm,
  nameRef,
  full,
  level,
  identities,
}: {
  level: 3 | 4;
  scope: RegionScope;
  form: FormState;
  setForm: (f: FormState) => void;
  nameRef: RefObject<HTMLInputElement | null>;
  full: boolean;
  identities: string[];
}) {
  const id = useId();
  const create = useCreateRegion(scope);
  const gateway = scope.kind === "gateway";
  const { replay, replayed, now } = useLiveReplay(scope, form.when, gateway ? form.identity || null : null);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const Sub = level === 3 ? "h4" : "h5";
  const SubSub = level === 3 ? "h5" : "h6";
  const whenError =
    problems.when ?? fieldError(create.error, "when") ?? (replayed === form.when.trim() ? fieldError(replay.error, "when") : undefined);
  const nameError = problems.name ?? fieldError(create.error, "name");
  const server = serverFieldErrors(create.error);
  const other = create.isError
    ? Object.entries(server).filter(([k]) => k !== "when" && k !== "name" && !(gateway && k === "identity"))
    : [];
  const failure = create.isError && Object.keys(server).length === 0 ? create.error : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (create.isPending) return;
    const found: Record<string, string> = {};
    if (!form.name.trim()) found.name = "Give the region a name.";
    if (!form.when.trim()) found.when = "Write the condition its calls meet, e.g. params.amount <= 200.";
    setProblems(found);
    setSaved(null);
    if (Object.keys(found).length) {
      document.getElementById(`${id}-${found.name ? "name" : "when"}`)?.focus();
      return;
    }
    create.mutate(
      {
        name: form.name.trim(),
        when: form.when.trim(),
        ...(form.mode !== "coaching" ? { mode: form.mode } : {}),
        ...(gateway && form.identity ? { identity: form.identity } : {}),
      },
      {
        onSuccess: (region) => {
          const whose = region.identity ? ` (agent ${region.identity}'s calls only)` : "";
          setSaved(`Added region “${region.name}”${whose}: nothing is counted for it yet; its decisions count from now on.`);
          setForm(EMPTY);
        },
        onError: (error) => {
          const details = serverFieldErrors(error);
          if (details.when) document.getElementById(`${id}-when`)?.focus();
          else if (details.name) document.getElementById(`${id}-name`)?.focus();
        },
      },
    );
  };

  const described = (name: string, hint: boolean, error: string | undefined) =>
    [hint ? `${id}-${name}-hint` : "", error ? `${id}-${name}-error` : ""].filter(Boolean).join(" ") || undefined;

  return (
    <form className="region-form" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <Sub id={`${id}-title`}>Add a region</Sub>
      {full ? <p className="muted">This scope has as many regions as it may hold: remove one first.</p> : null}
      <div className="region-form__grid">
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} ref={nameRef} type="text" maxLength={MAX_NAME} value={form.name}
            aria-invalid={nameError ? true : undefined} aria-describedby={described("name", false, nameError)}
            onChange={(e) => setForm({ ...form, name: e.target.value })} />
          {nameError ? (
            <small id={`${id}-name-error`} className="field-error" role="alert">
              ✕ Name: {nameError}
            </small>
          ) : null}
        </div>
        <div className="field">
          <label htmlFor={`${id}-mode`}>Mode</label>
          <select id={`${id}-mode`} value={form.mode}
            onChange={(e) => setForm({ ...form, mode: e.target.value as FormState["mode"] })}>
            <option value="coaching">Coaching: asked, its decisions count</option>
            <option value="always_review">Always reviewed (pinned)</option>
          </select>
        </div>
        {gateway ? (
          <IdentityField id={id} value={form.identity} identities={identities} error={fieldError(create.error, "identity")}
            onChange={(v) => setForm({ ...form, identity: v })} />
        ) : null}
      </div>
      <div className="field">
        <label htmlFor={`${id}-when`}>Condition</label>
        <textarea id={`${id}-when`} className="mono" rows={2} spellCheck={false} value={form.when}
          aria-invalid={whenError ? true : undefined} aria-describedby={described("when", true, whenError)}
          onChange={(e) => setForm({ ...form, when: e.target.value })} />
        <small id={`${id}-when-hint`} className="muted">
          The policy predicate language over the call's <code>params</code>
          {scope.kind === "gateway" ? <> (and <code>agent</code>)</> : null}, e.g. <code>params.amount &lt;= 200</code>.
          Replayed as you type.
        </small>
        {whenError ? (
          <small id={`${id}-when-error`} className="field-error" role="alert">
            ✕ Condition: {whenError}
          </small>
        ) : null}
      </div>
      {other.length ? (
        <div role="alert" className="notice notice--error">
          <p className="notice__title">The server refused the region:</p>
          <ul className="error-list">
            {other.map(([f, m]) => (
              <li key={f}>{f === "(body)" ? m : `${f}: ${m}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {failure ? (
        <p role="alert" className="notice notice--error">
          Not added: {errorMessage(failure)}
        </p>
      ) : null}
      <div className="filters__actions">
        <button type="button" className="button button--secondary" onClick={now} aria-describedby={`${id}-replay-title`}>
          Replay
        </button>
        <button type="submit" className="button" aria-disabled={create.isPending || undefined}>
          {create.isPending ? "Adding…" : "Add the region"}
        </button>
      </div>
      <div role="status" className="mode-outcome">
        {saved}
      </div>
      <section className="region-form__replay" aria-labelledby={`${id}-replay-title`} aria-live="polite">
        <SubSub id={`${id}-replay-title`} className="region-form__replay-title">
          What this condition would have done, in AUTO
        </SubSub>
        <ReplayResult replay={replay} replayed={replayed} />
      </section>
    </form>
  );
}

function ProposalCard({ p, onUse }: { p: Proposal; onUse: (p: Proposal) => void }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <li className="region-proposal" data-suggested-mode={p.suggested_mode}>
      <p>
        <code>{p.when}</code>{" "}
        <span className={p.suggested_mode === "auto" ? "status status--success" : "status status--muted"}>
          {p.suggested_mode === "auto" ? "a candidate for AUTO" : "a candidate to pin"}
        </span>
      </p>
      <p>{p.explanation}</p>
      <p className="muted">
        Holds for {formatRate(p.coverage)} of the decisions ({formatCount(p.decisions)}); acceptance{" "}
        {formatRate(p.acceptance)}, at least {formatRate(p.lower_bound)} (95% lower bound).{" "}
        {p.replay.unattended.corrected + p.replay.unattended.rejected
          ? `In AUTO it would have let ${plural(p.replay.unattended.corrected + p.replay.unattended.rejected, "corrected or rejected call")} run unattended.`
          : `In AUTO, ${plural(p.replay.unattended.calls, "call")} would have run unattended, none corrected or rejected.`}
      </p>
      <span className="step-actions">
        <button type="button" className="button button--small" onClick={() => onUse(p)}>
          Use this <span className="visually-hidden">proposal: {p.when}</span>
        </button>
        <button type="button" className="button button--secondary button--small" aria-expanded={open}
          aria-controls={id} onClick={() => setOpen(!open)}>
          {open ? "Hide" : "Show"} its replay <span className="visually-hidden">({p.when})</span>
        </button>
      </span>
      {open ? (
        <div id={id}>
          <ReplayTable replay={p.replay} subject={`the proposal ${p.when}`} />
        </div>
      ) : null}
    </li>
  );
}

function EditRegionDialog({ r, identities, onClose }: { r: Region; identities: string[]; onClose: () => void }) {
  const id = useId();
  const update = useUpdateRegion();
  const [name, setName] = useState(r.name);
  const [identity, setIdentity] = useState(r.identity ?? "");
  const [when, setWhen] = useState(r.when);
  const [order, setOrder] = useState(String(r.order));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const shown = { ...serverFieldErrors(update.error), ...problems };
  const server = serverFieldErrors(update.error);
  const failure = update.isError && Object.keys(server).length === 0 ? update.error : null;
  const changed = when.trim() !== r.when;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (update.isPending) return;
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = "Give the region a name.";
    if (!when.trim()) found.when = "Write the condition its calls meet.";
    const n = Number(order);
    if (order.trim() === "" || !Number.isInteger(n)) found.order = "must be a whole number";
    setProblems(found);
    if (Object.keys(found).length) return;
    const body: { name?: string; when?: string; order?: number; identity?: string | null } = {};
    if (name.trim() !== r.name) body.name = name.trim();
    if (changed) body.when = when.trim();
    if (n !== r.order) body.order = n;
    if (r.scope === "gateway" && identity !== (r.identity ?? "")) body.identity = identity || null;
    if (!Object.keys(body).length) return onClose();
    update.mutate({ id: r.id, ...body }, { onSuccess: onClose });
  };
  const error = (field: string, label: string) =>
    shown[field] ? (
      <small id={`${id}-${field}-error`} className="field-error" role="alert">
        ✕ {label}: {shown[field]}
      </small>
    ) : null;
  const describedBy = (field: string, hint = false) =>
    [hint ? `${id}-${field}-hint` : "", shown[field] ? `${id}-${field}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <Dialog title={`Edit region “${r.name}”`} onClose={() => !update.isPending && onClose()} closeButton={false}>
      <form onSubmit={submit} noValidate className="region-form">
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} type="text" maxLength={MAX_NAME} value={name} aria-invalid={shown.name ? true : undefined}
            aria-describedby={describedBy("name")} onChange={(e) => setName(e.target.value)} />
          {error("name", "Name")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-when`}>Condition</label>
          <textarea id={`${id}-when`} className="mono" rows={2} spellCheck={false} value={when}
            aria-invalid={shown.when ? true : undefined} aria-describedby={describedBy("when", true)}
            onChange={(e) => setWhen(e.target.value)} />
          <small id={`${id}-when-hint`} className={changed ? "dialog__warning" : "muted"}>
            Changing the condition restarts its evidence: the {plural(r.decisions, "decision")} counted now no longer
            count{r.mode === "auto" ? ", and the region goes back to coaching" : ""}. Renaming or reordering changes
            nothing.
          </small>
          {error("when", "Condition")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-order`}>Order</label>
          <input id={`${id}-order`} type="text" inputMode="numeric" value={order} aria-invalid={shown.order ? true : undefined}
            aria-describedby={describedBy("order", true)} onChange={(e) => setOrder(e.target.value)} />
          <small id={`${id}-order-hint`} className="muted">
            A call falls in the first region, by order, whose condition holds.
          </small>
          {error("order", "Order")}
        </div>
        {r.scope === "gateway" ? (
          <IdentityField id={id} value={identity} identities={identities} onChange={setIdentity} error={shown.identity} />
        ) : null}
        {failure ? (
          <p role="alert" className="notice notice--error">
            Not saved: {errorMessage(failure)}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button" aria-disabled={update.isPending || undefined}>
            {update.isPending ? "Saving…" : changed ? "Save and restart its evidence" : "Save"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The section: `heading` names it; `level` is its heading's level (3 under a page's h2). */
export function RegionsSection({ scope, heading, level = 3 }: { scope: RegionScope; heading?: string; level?: 3 | 4 }) {
  const headingId = useId();
  const regions = useRegions(scope);
  const modes = useRegionModeChanger();
  const remove = useDeleteRegion();
  const [editing, setEditing] = useState<Region | null>(null);
  const [removing, setRemoving] = useState<Region | null>(null);
  const [form, setForm] = useState<FormState>(EMPTY);
  const nameRef = useRef<HTMLInputElement>(null);
  const H = level === 3 ? "h3" : "h4";
  const Sub = level === 3 ? "h4" : "h5";
  const items = regions.data?.items ?? [];
  const proposals = regions.data?.proposals ?? [];
  const identities = regions.data?.identities ?? [];
  const owner = outsideOwner(scope);
  const title = heading ?? `Regions of ${scopeName(scope)}`;
  const use = (p: Proposal) => {
    setForm({
      ...form,
      name: proposalName(p),
      when: p.when,
      mode: p.suggested_mode === "always_review" ? "always_review" : "coaching",
    });
    nameRef.current?.focus();
  };
  const columns: Column<Region>[] = [
    { header: "Order", numeric: true, cell: (r) => r.order },
    {
      header: "Region",
      rowHeader: true,
      cell: (r) => (
        <>
          {r.name}
          <br />
          <code className="region-when">{r.when}</code>
          {r.identity ? (
            <span className="muted" data-region-identity={r.identity}>
              {" "}
              (agent {r.identity} only)
            </span>
          ) : null}
        </>
      ),
    },
    { header: "Mode", cell: (r) => <span data-region-mode={r.mode}>{MODE_WORDS[r.mode]}</span> },
    { header: "Progress to AUTO-ready", cell: (r) => <Progress r={r} /> },
    { header: "Spot checks", cell: (r) => <SpotChecks r={r} /> },
    {
      header: "Actions",
      cell: (r) => (
        <RegionActions r={r} onMode={modes.change} onEdit={() => setEditing(r)} onRemove={() => { remove.reset(); setRemoving(r); }} />
      ),
    },
  ];
  return (
    <section className="regions" aria-labelledby={headingId} data-regions-scope={scope.kind === "step" ? scope.stepId : scope.tool}>
      <H id={headingId}>{title}</H>
      <p className="muted">
        A call falls in the first region, by order, whose condition holds; a region has its own mode and its own
        evidence, counted from the decisions of its calls since its condition was fixed. A call in no region follows
        the {owner} mode; policy rules always win.
      </p>
      {modes.ui}
      {regions.isPending ? <Loading label="Loading the regions…" /> : null}
      {regions.isError ? (
        <ErrorNotice title="Could not load the regions" error={regions.error} onRetry={() => void regions.refetch()} />
      ) : null}
      {regions.data && !items.length ? <p className="empty">No region yet: every call follows the {owner} mode.</p> : null}
      {items.length ? (
        <DataTable caption={`${title}, in their order`} columns={columns} rows={items} rowKey={(r) => r.id}
          rowClassName={(r) => (r.auto_ready && r.mode === "coaching" ? "row--ready" : undefined)} />
      ) : null}

      {regions.data ? (
        <>
          <Sub className="regions__subhead">Proposed by Coach</Sub>
          {proposals.length ? (
            <ul className="region-proposals">
              {proposals.map((p) => (
                <ProposalCard key={p.when} p={p} onUse={use} />
              ))}
            </ul>
          ) : (
            <p className="muted">
              Nothing to propose: Coach proposes regions once {plural(regions.data.min_decisions, "decided call")} show
              where acceptance is high or low.
            </p>
          )}
          <AddRegionForm scope={scope} form={form} setForm={setForm} nameRef={nameRef}
            full={items.length >= regions.data.max_regions} level={level} identities={identities} />
        </>
      ) : null}

      {editing ? <EditRegionDialog r={editing} identities={identities} onClose={() => setEditing(null)} /> : null}
      {removing ? (
        <ConfirmMutation
          title={`Remove region “${removing.name}”?`}
          confirmLabel="Remove the region"
          mutation={remove}
          variables={{ id: removing.id }}
          failure="Not removed"
          onClose={() => setRemoving(null)}
        >
          <p>
            Its calls (<code>{removing.when}</code>) follow the {owner} mode
            again, and its evidence ({plural(removing.decisions, "decision")}) is gone: a new region starts from
            nothing.
          </p>
        </ConfirmMutation>
      ) : null}
    </section>
  );
}
