/** The administration API: members and invitations of the workspace (admins), and one's own bearer tokens. */
import { apiDelete, apiGet, apiPost, apiPut } from "../api/client";

export interface Member {
  id: string;
  email: string;
  name: string;
  role: string;
  disabled: boolean;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: string;
  invited_by: string;
  status: string;
  created_at: string;
}

export interface ApiToken {
  id: string;
  name: string;
  token?: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewMember {
  email: string;
  role: string;
  name?: string;
  password?: string;
}

export const ROLES = ["operator", "lead", "admin"] as const;

export const adminKeys = {
  members: ["admin", "members"] as const,
  invitations: ["admin", "invitations"] as const,
  tokens: ["auth", "tokens"] as const,
};

const user = (id: string) => `/api/users/${encodeURIComponent(id)}`;

export const fetchMembers = (signal?: AbortSignal) => apiGet<{ items: Member[] }>("/api/users", { signal });
export const fetchInvitations = (signal?: AbortSignal) =>
  apiGet<{ items: PendingInvitation[] }>("/api/users/invitations", { signal });
export const invite = (body: NewMember) => apiPost<{ status: string; email: string; role: string }>("/api/users", body);
export const cancelInvitation = (id: string) => apiDelete(`/api/users/invitations/${encodeURIComponent(id)}`);
export const changeRole = (id: string, role: string) => apiPut<Member>(`${user(id)}/role`, { role });
export const setDisabled = (id: string, disabled: boolean) => apiPost<Member>(`${user(id)}/${disabled ? "disable" : "enable"}`);
export const removeMember = (id: string) => apiDelete(user(id));
export const revokeMemberTokens = (id: string) => apiDelete(`${user(id)}/tokens`);

export const fetchTokens = (signal?: AbortSignal) => apiGet<{ items: ApiToken[] }>("/api/auth/tokens", { signal });
export const createToken = (name: string) => apiPost<ApiToken>("/api/auth/tokens", { name });
export const revokeToken = (id: string) => apiDelete(`/api/auth/tokens/${encodeURIComponent(id)}`);
