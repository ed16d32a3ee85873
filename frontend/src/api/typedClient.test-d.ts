// Type tests: the typed client refuses what the OpenAPI document does not allow (checked by `npm run typecheck`).
import { api, omitWorkspace, textBody, unwrap } from "./typed";

export async function typeChecks(): Promise<void> {
  // @ts-expect-error: a path the document does not have
  await api.GET("/api/no-such-path");
  // @ts-expect-error: a query parameter the document does not have
  await api.GET("/api/workflows", { params: { query: { per_pagee: 200 } } });
  const page = await unwrap(api.GET("/api/workflows", { params: { query: { per_page: 200 } } }));
  // @ts-expect-error: a response field the document does not have
  void page.no_such_field;
  void page.items;
  // @ts-expect-error: a body field the document does not have (and the required workflow_id missing)
  await api.POST("/api/executions/", { body: { workflow: "w" } });
  // @ts-expect-error: a mode the document does not allow
  await api.POST("/api/executions/", { body: { workflow_id: "w", mode: "fast" } });
  await api.POST("/api/executions/", { body: { workflow_id: "w", mode: "coaching" } });
  // text with its content type where the document takes YAML text …
  await api.POST("/api/plans", textBody("name: p", "application/yaml"));
  // @ts-expect-error: … and not where it takes only JSON
  await api.POST("/api/executions/", textBody("workflow_id: w", "application/yaml"));
  await api.GET("/api/auth/me", { ...omitWorkspace });
}
