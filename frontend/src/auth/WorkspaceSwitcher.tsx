import { useId } from "react";
import { useAuth } from "./useAuth";

/** Picks the workspace every request is made for; each option names the user's role there. */
export function WorkspaceSwitcher() {
  const { workspaces, workspace, switchWorkspace } = useAuth();
  const id = useId();
  if (workspaces.length === 0) return null;
  return (
    <div className="workspace-switcher">
      <label htmlFor={id}>Workspace</label>
      <select id={id} value={workspace ? String(workspace.id) : ""} onChange={(e) => switchWorkspace(e.target.value)}>
        {workspace ? null : <option value="">Choose a workspace</option>}
        {workspaces.map((w) => (
          <option key={String(w.id)} value={String(w.id)}>
            {w.name} ({w.role})
          </option>
        ))}
      </select>
    </div>
  );
}
