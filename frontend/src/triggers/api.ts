/** A workflow's incoming webhooks and cron schedules (docs/triggers.md): everyone reads them, leads manage them. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiDelete, apiGet, apiPatch, apiPost } from "../api/client";

export interface Hook {
  id: string;
  workflow_id: string;
  name: string;
  mapping: Record<string, string>;
  mode: string | null;
  path: string;
  url: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  active: boolean;
}

/** The answer of the create: the only time the secret is seen. */
export interface CreatedHook extends Hook {
  secret: string;
}

export interface Schedule {
  id: string;
  workflow_id: string;
  name: string;
  cron: string;
  timezone: string;
  description: string;
  variables: Record<string, unknown>;
  mode: string | null;
  enabled: boolean;
  next_fire_at: string | null;
  next_fire_times: string[];
  last_fired_at: string | null;
  last_execution_id: string | null;
  last_error: string;
  created_by: string;
  created_at: string;
}

export interface SchedulePreview {
  cron: string;
  timezone: string;
  description: string;
  next_fire_times: string[];
}

export interface NewSchedule {
  name: string;
  cron: string;
  timezone: string;
  variables: Record<string, unknown>;
}

const base = (workflowId: string) => `/api/workflows/${encodeURIComponent(workflowId)}`;
export const triggerKeys = {
  hooks: (workflowId: string) => ["triggers", workflowId, "hooks"] as const,
  schedules: (workflowId: string) => ["triggers", workflowId, "schedules"] as const,
  preview: (workflowId: string, cron: string, timezone: string) =>
    ["triggers", workflowId, "preview", cron, timezone] as const,
};

export function useHooks(workflowId: string) {
  return useQuery({
    queryKey: triggerKeys.hooks(workflowId),
    queryFn: ({ signal }) => apiGet<{ items: Hook[] }>(`${base(workflowId)}/hooks`, { signal }),
  });
}

export function useCreateHook(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<CreatedHook, unknown, { name: string; mapping: Record<string, string> }>({
    mutationFn: (body) => apiPost<CreatedHook>(`${base(workflowId)}/hooks`, body),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.hooks(workflowId) }),
  });
}

export function useRevokeHook(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => apiDelete<void>(`${base(workflowId)}/hooks/${encodeURIComponent(id)}`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.hooks(workflowId) }),
  });
}

export function useSchedules(workflowId: string) {
  return useQuery({
    queryKey: triggerKeys.schedules(workflowId),
    queryFn: ({ signal }) => apiGet<{ items: Schedule[] }>(`${base(workflowId)}/schedules`, { signal }),
    refetchInterval: 30_000, // next and last fire times move on by themselves
  });
}

/** The next fire times of a cron expression in a zone, as the server reads it (a 422 says what is wrong). */
export function useSchedulePreview(workflowId: string, cron: string, timezone: string) {
  return useQuery({
    queryKey: triggerKeys.preview(workflowId, cron, timezone),
    queryFn: ({ signal }) =>
      apiGet<SchedulePreview>(
        `${base(workflowId)}/schedules/preview?${new URLSearchParams({ cron, timezone }).toString()}`,
        { signal },
      ),
    enabled: cron.trim() !== "" && timezone.trim() !== "",
    staleTime: 60_000,
  });
}

export function useCreateSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<Schedule, unknown, NewSchedule>({
    mutationFn: (body) => apiPost<Schedule>(`${base(workflowId)}/schedules`, body),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.schedules(workflowId) }),
  });
}

export function useChangeSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<Schedule, unknown, { id: string; enabled: boolean }>({
    mutationFn: ({ id, enabled }) =>
      apiPatch<Schedule>(`${base(workflowId)}/schedules/${encodeURIComponent(id)}`, { enabled }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.schedules(workflowId) }),
  });
}

export function useDeleteSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => apiDelete<void>(`${base(workflowId)}/schedules/${encodeURIComponent(id)}`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.schedules(workflowId) }),
  });
}

/** A shell example that signs and sends one delivery (docs/triggers.md). */
export function curlExample(url: string, secret: string, body: string): string {
  const quoted = body.replace(/'/g, "'\\''");
  return [
    `SECRET='${secret}'`,
    `BODY='${quoted}'`,
    "TS=$(date +%s)",
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
    `curl -X POST '${url}' -H 'Content-Type: application/json' \\`,
    `  -H "X-Coach-Timestamp: $TS" -H "X-Coach-Signature: sha256=$SIG" \\`,
    `  -H "X-Coach-Delivery: $(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen)" -d "$BODY"`,
  ].join("\n");
}

/** An example body: each declared variable with its default, or an empty string. */
export function exampleBody(variables: Record<string, unknown> | undefined, mapping?: Record<string, string> | null): string {
  const body: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(variables ?? {})) {
    const declared = spec && typeof spec === "object" && !Array.isArray(spec) ? (spec as Record<string, unknown>) : null;
    const value = declared ? (declared.default ?? "") : spec;
    const path = mapping?.[name];
    if (path) placeAt(body, path.split("."), value);
    else if (!mapping || Object.keys(mapping).length === 0) body[name] = value;
  }
  return JSON.stringify(body);
}

/** Puts `value` at a mapping's path of the body (`order.id`, `lines.0.total`: a number is an array's index). */
function placeAt(target: Record<string, unknown> | unknown[], path: string[], value: unknown): void {
  const [head, ...rest] = path;
  const key: string | number = /^\d+$/.test(head) && Array.isArray(target) ? Number(head) : head;
  const slot = target as Record<string | number, unknown>;
  if (rest.length === 0) {
    slot[key] = value;
    return;
  }
  if (slot[key] === undefined || slot[key] === null || typeof slot[key] !== "object")
    slot[key] = /^\d+$/.test(rest[0]) ? [] : {};
  placeAt(slot[key] as Record<string, unknown> | unknown[], rest, value);
}
