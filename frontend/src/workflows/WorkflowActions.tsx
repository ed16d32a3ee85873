import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { FailureNotice } from "../components/QueryState";
import { DialogButton } from "../components/DialogButton";
import "./workflows.css";

/**
 * A lead's actions on a workflow: edit (saving makes a new version), compare its versions, delete it (executions
 * that ran it keep showing which definition they ran).
 */
export function WorkflowActions({ id, name, latestVersion }: { id: string; name: string; latestVersion: number }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/workflows/{workflow_id}", { params: { path: { workflow_id: id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["workflows"] });
      queryClient.removeQueries({ queryKey: ["workflow", id] });
      navigate("/workflows", { state: { notice: `Deleted ${name}.` } });
    },
  });
  const path = `/workflows/${encodeURIComponent(id)}`;
  return (
    <div className="workflow-actions">
      <Link to={`${path}/edit`} className="button">
        Edit
      </Link>
      {latestVersion > 1 ? (
        <Link to={`${path}/diff`} className="button button--secondary">
          Compare versions
        </Link>
      ) : null}
      <DialogButton className="button button--danger" onOpen={() => { remove.reset(); setConfirming(true); }}>
        Delete
      </DialogButton>
      {confirming ? (
        <ConfirmDialog
          title={`Delete ${name}?`}
          confirmLabel="Delete workflow"
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            It leaves the Workflows page and no new run can start. Executions that ran it keep their history, and the
            audit log records who deleted it.
          </p>
          <FailureNotice mutation={remove} what="Not deleted" />
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
