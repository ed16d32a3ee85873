/** Server state of the Policies page: the rules, the workspace default, the dry run. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api/typed";
import type { PolicyVerdict } from "../approvals/types";
import type { Replay } from "../regions/api";
import type { EvaluateRequest, PolicyDefaults, PolicyReplayRequest, PolicyRule, PolicyRuleIn } from "./types";

export const policyKeys = {
  all: ["policies"] as const,
  list: ["policies", "list"] as const,
  defaults: ["policies", "default"] as const,
};

const rule = (policy_id: string) => ({ params: { path: { policy_id } } });
const putRule = (id: string, body: PolicyRuleIn) => unwrap(api.PUT("/api/policies/{policy_id}", { ...rule(id), body }));

/** The fields PUT takes back (the server's extra fields, id and dates, stay out). */
export function ruleBody(rule: PolicyRule | PolicyRuleIn): PolicyRuleIn {
  const { name, order, effect, reason, enabled, scope, match } = rule;
  return { name, order, effect, reason, enabled, scope, match };
}

export function usePolicies() {
  return useQuery({
    queryKey: policyKeys.list,
    queryFn: ({ signal }) => unwrap(api.GET("/api/policies", { signal })),
  });
}

export function usePolicyDefaults() {
  return useQuery({
    queryKey: policyKeys.defaults,
    queryFn: ({ signal }) => unwrap(api.GET("/api/policies/default", { signal })),
  });
}

/** Creates (no id) or replaces a rule. */
export function useSaveRule() {
  const queryClient = useQueryClient();
  return useMutation<PolicyRule, unknown, { id: string | null; rule: PolicyRuleIn }>({
    mutationFn: ({ id, rule: body }) => (id ? putRule(id, body) : unwrap(api.POST("/api/policies", { body }))),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => unwrap(api.DELETE("/api/policies/{policy_id}", rule(id))),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

/** Moves a rule before or after its neighbour of the same scope: PUTs the orders that make it so. */
export function useMoveRule() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, { rule: PolicyRule; neighbour: PolicyRule; direction: "up" | "down" }>({
    mutationFn: async ({ rule: moved, neighbour, direction }) => {
      if (moved.order !== neighbour.order) {
        // swap: each takes the other's place
        await putRule(moved.id, { ...ruleBody(moved), order: neighbour.order });
        await putRule(neighbour.id, { ...ruleBody(neighbour), order: moved.order });
      } else {
        // same order (the older rule wins): step just past the neighbour
        await putRule(moved.id, { ...ruleBody(moved), order: moved.order + (direction === "up" ? -1 : 1) });
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: policyKeys.all }),
  });
}

export function useSaveDefaults() {
  const queryClient = useQueryClient();
  return useMutation<PolicyDefaults, unknown, PolicyDefaults>({
    mutationFn: (body) => unwrap(api.PUT("/api/policies/default", { body })),
    onSuccess: (saved) => queryClient.setQueryData(policyKeys.defaults, saved),
  });
}

export function useDryRun() {
  return useMutation<PolicyVerdict, unknown, EvaluateRequest>({
    mutationFn: (body) => unwrap(api.POST("/api/policies/evaluate", { body })),
  });
}

/** What the workspace's rules with this one added would have done to the latest decided calls (nothing is stored). */
export function usePolicyReplay() {
  return useMutation<Replay, unknown, PolicyReplayRequest>({
    mutationFn: (body) => unwrap(api.POST("/api/policies/replay", { body })),
  });
}
