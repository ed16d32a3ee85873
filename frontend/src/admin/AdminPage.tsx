import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../api/client";
import { satisfies } from "../approvals/eligibility";
import { useAuth } from "../auth/useAuth";
import { ListTable } from "../components/ListTable";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { formatDateTime } from "../format";
import { useDocumentTitle } from "../hooks";
import {
  adminKeys,
  cancelInvitation,
  changeRole,
  fetchInvitations,
  fetchMembers,
  isRole,
  removeMember,
  revokeMemberTokens,
  setDisabled,
  type Member,
} from "./api";
import { InviteForm, RoleOptions } from "./InviteForm";
import { DialogButton } from "../components/DialogButton";
import "./admin.css";

type PendingConfirm = { kind: "remove" | "tokens" | "disable"; member: Member } | null;

const CONFIRM = {
  remove: {
    title: (email: string) => `Remove ${email}?`,
    label: "Remove member",
    text: "They lose access to this workspace at once (their account and other workspaces stay). Invite them again to bring them back.",
  },
  tokens: {
    title: (email: string) => `Revoke the tokens of ${email}?`,
    label: "Revoke tokens",
    text: "Every bearer token they made until now stops working in this workspace, and their scripts are disconnected. Tokens they make later work again.",
  },
  disable: {
    title: (email: string) => `Disable ${email}?`,
    label: "Disable member",
    text: "They can no longer act in this workspace: their open pages are told so at once and their connections end. Their account, tokens and other workspaces stay; Enable brings them back.",
  },
} as const;

/**
 * The workspace's administration (admins): its members and their roles (change, disable, enable, remove, revoke
 * their tokens), invitations (send, cancel). Every change is audited by the server; the last admin cannot be
 * demoted, disabled or removed (its 409 is shown).
 */
export default function AdminPage() {
  useDocumentTitle("Administration");
  const { role, user, workspace } = useAuth();
  const queryClient = useQueryClient();
  const admin = satisfies(role, "admin");
  const [notice, setNotice] = useState<{ tone: "info" | "error"; text: string } | null>(null);
  const [pending, setPending] = useState<PendingConfirm>(null);

  const members = useQuery({ queryKey: adminKeys.members, queryFn: ({ signal }) => fetchMembers(signal), enabled: admin });
  const invitations = useQuery({
    queryKey: adminKeys.invitations,
    queryFn: ({ signal }) => fetchInvitations(signal),
    enabled: admin,
  });
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ["admin"] });
  };
  const act = useMutation({
    mutationFn: async (run: { action: () => Promise<unknown>; done: string }) => {
      await run.action();
      return run.done;
    },
    onSuccess: (done) => {
      setPending(null);
      setNotice({ tone: "info", text: done });
      refresh();
    },
    onError: (error) => {
      setPending(null);
      setNotice({ tone: "error", text: `Not done: ${errorMessage(error)}` });
    },
  });
  const run = (action: () => Promise<unknown>, done: string) => {
    setNotice(null);
    act.mutate({ action, done });
  };

  if (!admin) {
    return (
      <section aria-labelledby="admin-heading">
        <h1 id="admin-heading">Administration</h1>
        <p className="notice notice--info">Only a workspace's admins manage its members. Your role here: {role}.</p>
      </section>
    );
  }

  return (
    <section aria-labelledby="admin-heading" className="admin">
      <h1 id="admin-heading">Administration{workspace ? `: ${workspace.name}` : ""}</h1>
      <p className="lead">
        Who works in this workspace and with which role: operators decide, leads also promote workflows and manage
        packs and policies, admins also manage members. Everything here is recorded in the audit log.
      </p>
      <div role="alert" className={notice?.tone === "error" ? "notice notice--error" : "visually-hidden"}>
        {notice?.tone === "error" ? notice.text : null}
      </div>
      <p role="status" className={notice?.tone === "info" ? "notice notice--info" : "visually-hidden"}>
        {notice?.tone === "info" ? notice.text : null}
      </p>

      <h2 id="members-heading">Members</h2>
      {members.isPending ? (
        <Loading label="Loading the members…" />
      ) : members.isError ? (
        <ErrorNotice title="Could not load the members" error={members.error} onRetry={() => void members.refetch()} />
      ) : (
        <ListTable labelledBy="members-heading" caption={`Members, ${members.data.items.length}`} actions
          columns={["Member", "Role", "State"]}>
          {members.data.items.map((m) => {
            const self = String(m.id) === String(user?.id);
            return (
              <tr key={m.id}>
                <th scope="row" className="cell-name">
                  <span className="cell-name__title">{m.email}</span>
                  {m.name ? <span className="cell-name__description">{m.name}</span> : null}
                  {self ? <span className="cell-name__description">(you)</span> : null}
                </th>
                <td>
                  <label className="visually-hidden" htmlFor={`role-${m.id}`}>
                    Role of {m.email}
                  </label>
                  <select
                    id={`role-${m.id}`}
                    value={m.role}
                    disabled={act.isPending}
                    onChange={(e) => {
                      // read now: the select is controlled, and shows the stored role again until the answer
                      const next = e.target.value;
                      if (isRole(next)) run(() => changeRole(m.id, next), `${m.email} is now ${next}.`);
                    }}
                  >
                    <RoleOptions />
                  </select>
                </td>
                <td>{m.disabled ? <span className="tag tag--paused">Disabled</span> : "Active"}</td>
                <td className="actions">
                  <div className="admin__actions">
                  {m.disabled ? (
                    <button
                      type="button"
                      className="button button--secondary"
                      disabled={act.isPending}
                      onClick={() => run(() => setDisabled(m.id, false), `${m.email} can act here again.`)}
                      aria-label={`Enable ${m.email}`}
                    >
                      Enable
                    </button>
                  ) : (
                    <DialogButton label={`Disable ${m.email}`} onOpen={() => setPending({ kind: "disable", member: m })}>
                      Disable
                    </DialogButton>
                  )}
                  <DialogButton label={`Revoke the tokens of ${m.email}`}
                    onOpen={() => setPending({ kind: "tokens", member: m })}>
                    Revoke tokens
                  </DialogButton>
                  <DialogButton className="button button--danger" label={`Remove ${m.email}`}
                    onOpen={() => setPending({ kind: "remove", member: m })}>
                    Remove
                  </DialogButton>
                  </div>
                </td>
              </tr>
            );
          })}
        </ListTable>
      )}

      {pending ? (
        <ConfirmDialog
          title={CONFIRM[pending.kind].title(pending.member.email)}
          confirmLabel={CONFIRM[pending.kind].label}
          busy={act.isPending}
          onConfirm={() => {
            const { id, email } = pending.member;
            if (pending.kind === "remove") run(() => removeMember(id), `${email} was removed from this workspace.`);
            else if (pending.kind === "tokens") run(() => revokeMemberTokens(id), `The tokens of ${email} stopped working here.`);
            else run(() => setDisabled(id, true), `${email} is disabled here.`);
          }}
          onCancel={() => setPending(null)}
        >
          <p>{CONFIRM[pending.kind].text}</p>
        </ConfirmDialog>
      ) : null}

      <h2>Invite someone</h2>
      <InviteForm onInvited={(text) => {
        setNotice({ tone: "info", text });
        refresh();
      }} />

      <h2 id="invitations-heading">Pending invitations</h2>
      {invitations.isPending ? (
        <Loading label="Loading the invitations…" />
      ) : invitations.isError ? (
        <ErrorNotice title="Could not load the invitations" error={invitations.error} />
      ) : invitations.data.items.length === 0 ? (
        <p className="empty">No invitation is waiting.</p>
      ) : (
        <ul className="admin__invitations" aria-labelledby="invitations-heading">
          {invitations.data.items.map((inv) => (
            <li key={inv.id}>
              <span>
                <strong>{inv.email}</strong> as {inv.role}, sent {formatDateTime(inv.created_at)}
              </span>
              <button
                type="button"
                className="button button--secondary"
                disabled={act.isPending}
                onClick={() => run(() => cancelInvitation(inv.id), `The invitation of ${inv.email} was cancelled.`)}
                aria-label={`Cancel the invitation of ${inv.email}`}
              >
                Cancel invitation
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
