/** Server state of the Policies page: the rules, the workspace default, the dry run. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiDelete, apiGet, apiPost, apiPut } from "../api/client";
import type { PolicyVerdict } from "../approvals/types";
import type { Replay } from "../regions/api";
import type { EvaluateRequest, PolicyDefaults, PolicyList, PolicyRule, PolicyRuleIn } from "./types";

export const policyKeys = {
  all: ["policies"] as const,
  list: ["policies", "list"] as const,
  defaults: ["policies", "default"] as const,
};

const rulePath = (id: string) => `/api/policies/${encodeURIComponent(id)}`;

/** The fields PUT takes back (the server's extra fields, id and dates, stay out). */
export function ruleBody(rule: PolicyRule | PolicyRuleIn): PolicyRuleIn {
  const { name, order, effect, reason, enabled, scope, match } = rule;
  return { name, order, effect, reason, enabled, scope, match };
}

export function usePolicies() {
  return useQuery({
    queryKey: policyKeys.list,
    queryFn: ({ signal }) => apiGet<PolicyList>("/api/policies", { signal }),
  });
}

export function usePolicyDefaults() {
  return useQuery({
    queryKey: policyKeys.defaults,
    queryFn: ({ signal }) => apiGet<PolicyDefaults>("/api/policies/default", { signal }),
  });
}

/** Creates (no id) or replaces a rule. */
export function useSaveRule() {
  const queryClient = useQueryClient();
  return useMutation<PolicyRule, unknown, { id: string | null; rule: PolicyRuleIn }>({
    mutationFn: ({ id, rule }) => (id ? apiPut<PolicyRule>(rulePath(id), rule) : apiPost<PolicyRule>("/api/policies", rule)),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => apiDelete<void>(rulePath(id)),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

/** Moves a rule before or after its neighbour of the same scope: PUTs the orders that make it so. */
export function useMoveRule() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, { rule: PolicyRule; neighbour: PolicyRule; direction: "up" | "down" }>({
    mutationFn: async ({ rule, neighbour, direction }) => {
      if (rule.order !== neighbour.order) {
        // swap: each takes the other's place
        await apiPut(rulePath(rule.id), { ...ruleBody(rule), order: neighbour.order });
        await apiPut(rulePath(neighbour.id), { ...ruleBody(neighbour), order: rule.order });
      } else {
        // same order (the older rule wins): step just past the neighbour
        await apiPut(rulePath(rule.id), { ...ruleBody(rule), order: rule.order + (direction === "up" ? -1 : 1) });
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

export function useSaveDefaults() {
  const queryClient = useQueryClient();
  return useMutation<PolicyDefaults, unknown, PolicyDefaults>({
    mutationFn: (defaults) => apiPut<PolicyDefaults>("/api/policies/default", defaults),
    onSuccess: (saved) => queryClient.setQueryData(policyKeys.defaults, saved),
  });
}

export function useDryRun() {
  return useMutation<PolicyVerdict, unknown, EvaluateRequest>({
    mutationFn: (call) => apiPost<PolicyVerdict>("/api/policies/evaluate", call),
  });
}

/** Body of `POST /api/policies/replay`: the rule being written and where to replay it (none: its scope's workflow, or the workspace's calls). */
export interface PolicyReplayRequest {
  rule: PolicyRuleIn;
  workflow_id?: string | null;
  step_id?: string | null;
  tool?: string | null;
}

/** What the workspace's rules with this one added would have done to the latest decided calls (nothing is stored). */
export function usePolicyReplay() {
  return useMutation<Replay, unknown, PolicyReplayRequest>({
    mutationFn: (body) => apiPost<Replay>("/api/policies/replay", body),
  });
}
