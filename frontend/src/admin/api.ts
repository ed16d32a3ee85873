/** The administration API: members and invitations of the workspace (admins), and one's own bearer tokens. */
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

type Schemas = components["schemas"];

/** A member of the workspace, with their role. */
export type Member = Schemas["Member"];
/** A pending invitation of the workspace (`GET /api/users/invitations`). */
export type PendingInvitation = Schemas["Invitation"];
/** One of the caller's bearer tokens (`token` only in the answer that creates it). */
export type ApiToken = Schemas["Token"];
/** Body of `POST /api/users`: an invitation (and, for an email without an account, the account). */
export type NewMember = Schemas["NewMember"];
export type Role = Member["role"];

export const ROLES = ["operator", "lead", "admin"] as const satisfies readonly Role[];

/** Whether `value` (a select's) is a role. */
export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

export const adminKeys = {
  members: ["admin", "members"] as const,
  invitations: ["admin", "invitations"] as const,
  tokens: ["auth", "tokens"] as const,
};

const user = (user_id: string) => ({ params: { path: { user_id } } });

export const fetchMembers = (signal?: AbortSignal) => unwrap(api.GET("/api/users", { signal }));
export const fetchInvitations = (signal?: AbortSignal) => unwrap(api.GET("/api/users/invitations", { signal }));
export const invite = (body: NewMember) => unwrap(api.POST("/api/users", { body }));
export const cancelInvitation = (invitation_id: string) =>
  unwrap(api.DELETE("/api/users/invitations/{invitation_id}", { params: { path: { invitation_id } } }));
export const changeRole = (id: string, role: Role) => unwrap(api.PUT("/api/users/{user_id}/role", { ...user(id), body: { role } }));
export const setDisabled = (id: string, disabled: boolean) =>
  unwrap(disabled ? api.POST("/api/users/{user_id}/disable", user(id)) : api.POST("/api/users/{user_id}/enable", user(id)));
export const removeMember = (id: string) => unwrap(api.DELETE("/api/users/{user_id}", user(id)));
export const revokeMemberTokens = (id: string) => unwrap(api.DELETE("/api/users/{user_id}/tokens", user(id)));

export const fetchTokens = (signal?: AbortSignal) => unwrap(api.GET("/api/auth/tokens", { signal }));
export const createToken = (name: string) => unwrap(api.POST("/api/auth/tokens", { body: { name } }));
export const revokeToken = (token_id: string) =>
  unwrap(api.DELETE("/api/auth/tokens/{token_id}", { params: { path: { token_id } } }));
