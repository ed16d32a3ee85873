/** A workflow's incoming webhooks and cron schedules (docs/triggers.md): everyone reads them, leads manage them. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

type Schemas = components["schemas"];

export type Hook = Schemas["HookOut"];

/** The answer of the create: the only time the secret is seen. */
export type CreatedHook = Schemas["HookCreated"];

export type Schedule = Schemas["ScheduleOut"];

export type SchedulePreview = Schemas["PreviewOut"];

/** Body of `POST /api/workflows/<id>/schedules`. */
export type NewSchedule = Schemas["ScheduleIn"];

const workflow = (workflowId: string) => ({ path: { workflow_id: workflowId } });
export const triggerKeys = {
  hooks: (workflowId: string) => ["triggers", workflowId, "hooks"] as const,
  schedules: (workflowId: string) => ["triggers", workflowId, "schedules"] as const,
  preview: (workflowId: string, cron: string, timezone: string) =>
    ["triggers", workflowId, "preview", cron, timezone] as const,
};

export function useHooks(workflowId: string) {
  return useQuery({
    queryKey: triggerKeys.hooks(workflowId),
    queryFn: ({ signal }) => unwrap(api.GET("/api/workflows/{workflow_id}/hooks", { params: workflow(workflowId), signal })),
  });
}

export function useCreateHook(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<CreatedHook, unknown, Schemas["HookIn"]>({
    mutationFn: (body) => unwrap(api.POST("/api/workflows/{workflow_id}/hooks", { params: workflow(workflowId), body })),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.hooks(workflowId) }),
  });
}

export function useRevokeHook(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: async (id) => {
      await unwrap(
        api.DELETE("/api/workflows/{workflow_id}/hooks/{hook_id}", { params: { path: { workflow_id: workflowId, hook_id: id } } }),
      );
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.hooks(workflowId) }),
  });
}

export function useSchedules(workflowId: string) {
  return useQuery({
    queryKey: triggerKeys.schedules(workflowId),
    queryFn: ({ signal }) => unwrap(api.GET("/api/workflows/{workflow_id}/schedules", { params: workflow(workflowId), signal })),
    refetchInterval: 30_000, // next and last fire times move on by themselves
  });
}

/** The next fire times of a cron expression in a zone, as the server reads it (a 422 says what is wrong). */
export function useSchedulePreview(workflowId: string, cron: string, timezone: string) {
  return useQuery({
    queryKey: triggerKeys.preview(workflowId, cron, timezone),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/workflows/{workflow_id}/schedules/preview", {
          params: { ...workflow(workflowId), query: { cron, timezone } },
          signal,
        }),
      ),
    enabled: cron.trim() !== "" && timezone.trim() !== "",
    staleTime: 60_000,
  });
}

export function useCreateSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<Schedule, unknown, NewSchedule>({
    mutationFn: (body) => unwrap(api.POST("/api/workflows/{workflow_id}/schedules", { params: workflow(workflowId), body })),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.schedules(workflowId) }),
  });
}

export function useChangeSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<Schedule, unknown, { id: string; enabled: boolean }>({
    mutationFn: ({ id, enabled }) =>
      unwrap(
        api.PATCH("/api/workflows/{workflow_id}/schedules/{schedule_id}", {
          params: { path: { workflow_id: workflowId, schedule_id: id } },
          body: { enabled },
        }),
      ),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: triggerKeys.schedules(workflowId) }),
  });
}

export function useDeleteSchedule(workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: async (id) => {
      await unwrap(
        api.DELETE("/api/workflows/{workflow_id}/schedules/{schedule_id}", {
          params: { path: { workflow_id: workflowId, schedule_id: id } },
        }),
      );
    },
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
