import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import type { Workflow } from "../api/types";
import { useAuth } from "../auth/useAuth";
import { StartDialog, type StartRequest } from "./StartDialog";
import { DialogButton } from "../components/DialogButton";

/**
 * "Run": opens the start dialog (mode, the declared variables) and starts the run; the new execution's page opens.
 */
export function StartRunButton({ workflow, className = "button" }: { workflow: Workflow; className?: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { role } = useAuth();
  const [open, setOpen] = useState(false);
  const run = useMutation({
    mutationFn: ({ workflow: wf, mode, variables }: StartRequest) =>
      unwrap(api.POST("/api/executions/", { body: { workflow_id: wf.id, variables, mode } })),
    onSuccess: (execution) => {
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
      navigate(`/executions/${encodeURIComponent(execution.execution_id)}`);
    },
  });
  return (
    <>
      <DialogButton className={className} label={`Run ${workflow.name}`} onOpen={() => { run.reset(); setOpen(true); }}>
        Run
      </DialogButton>
      {open ? (
        <StartDialog
          workflow={workflow}
          role={role}
          busy={run.isPending}
          error={run.error}
          onStart={(request) => run.mutate(request)}
          onCancel={() => setOpen(false)}
        />
      ) : null}
    </>
  );
}
