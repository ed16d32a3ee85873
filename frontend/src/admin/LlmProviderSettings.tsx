import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { useLocation } from "react-router-dom";
import { errorMessage } from "../api/client";
import { formatDateTime } from "../format";
import { serverFieldErrors } from "../policies/fieldErrors";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import {
  fetchLlmProvider,
  llmKeys,
  removeLlmProvider,
  saveLlmProvider,
  testLlmProvider,
  type LlmProvider,
  type LlmProviderChange,
} from "./llmApi";

const FIELDS = ["base_url", "model", "api_key"] as const;

/**
 * Settings → LLM provider (admins): the workspace's own OpenAI-compatible server for agent steps (base URL, model,
 * an API key that is stored encrypted and never shown again), and a Test button that asks the saved provider one
 * small question and shows its answer or what went wrong.
 */
export function LlmProviderSettings() {
  const provider = useQuery({ queryKey: llmKeys.provider, queryFn: ({ signal }) => fetchLlmProvider(signal) });
  const section = useRef<HTMLElement>(null);
  const { hash } = useLocation();
  useEffect(() => {
    // a link to /settings#llm-provider (e.g. from a run refused for want of a provider) lands here
    if (hash === "#llm-provider" && provider.data && section.current) {
      section.current.scrollIntoView?.({ block: "start" });
      section.current.focus({ preventScroll: true });
    }
  }, [hash, provider.data]);
  return (
    <section aria-labelledby="llm-provider-heading" id="llm-provider" ref={section} tabIndex={-1}>
      <h2 id="llm-provider-heading">LLM provider</h2>
      <p className="muted">
        The OpenAI-compatible server this workspace's agent steps ask (OpenAI, vLLM, Ollama, llama.cpp…). When it is
        set, it is used instead of the server's <code>COACH_LLM_*</code> settings.
      </p>
      {provider.isPending ? (
        <Loading label="Loading the LLM provider…" />
      ) : provider.isError ? (
        <ErrorNotice title="Could not load the LLM provider" error={provider.error} onRetry={() => void provider.refetch()} />
      ) : (
        <ProviderForm key={`${provider.data.base_url}|${provider.data.model}|${provider.data.updated_at}`} saved={provider.data} />
      )}
    </section>
  );
}

function inUseText(saved: LlmProvider): string {
  if (saved.in_use === "workspace") return "Agent steps use this workspace's provider.";
  if (saved.in_use === "server")
    return `Agent steps use the server's provider (COACH_LLM_BASE_URL${saved.server_default.model ? `, model ${saved.server_default.model}` : ""}) until you set one here.`;
  return "No provider is set: agent steps cannot run until you set one here.";
}

function ProviderForm({ saved }: { saved: LlmProvider }) {
  const queryClient = useQueryClient();
  const id = useId();
  const [baseUrl, setBaseUrl] = useState(saved.base_url ?? "");
  const [model, setModel] = useState(saved.model ?? "");
  const [apiKey, setApiKey] = useState("");
  const [clearKey, setClearKey] = useState(false);
  const [local, setLocal] = useState<Record<string, string>>({});
  const [savedNote, setSavedNote] = useState(false);

  const save = useMutation({
    mutationFn: (body: LlmProviderChange) => saveLlmProvider(body),
    onSuccess: (data) => {
      setSavedNote(true);
      test.reset();
      queryClient.setQueryData(llmKeys.provider, data);
    },
  });
  const remove = useMutation({
    mutationFn: removeLlmProvider,
    onSuccess: () => {
      test.reset();
      void queryClient.invalidateQueries({ queryKey: llmKeys.provider });
    },
  });
  const test = useMutation({ mutationFn: testLlmProvider });

  const dirty = baseUrl.trim() !== (saved.base_url ?? "") || model.trim() !== (saved.model ?? "") || apiKey !== "" || clearKey;
  const server = serverFieldErrors(save.error);
  const problems: Record<string, string> = { ...server, ...local };
  const unplaced = save.isError && !FIELDS.some((f) => problems[f]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!/^https?:\/\/\S+$/i.test(baseUrl.trim())) found.base_url = "must be an http:// or https:// address";
    if (!model.trim()) found.model = "is required";
    setLocal(found);
    setSavedNote(false);
    if (Object.keys(found).length > 0 || save.isPending) return;
    const body: LlmProviderChange = { base_url: baseUrl.trim(), model: model.trim() };
    if (apiKey.trim()) body.api_key = apiKey.trim();
    if (clearKey) body.clear_api_key = true;
    save.mutate(body);
  };

  const field = (name: (typeof FIELDS)[number]) => ({
    id: `${id}-${name}`,
    "aria-invalid": problems[name] ? true : undefined,
    "aria-describedby": `${id}-${name}-hint${problems[name] ? ` ${id}-${name}-error` : ""}`,
  });
  const fieldError = (name: (typeof FIELDS)[number]) =>
    problems[name] ? (
      <small id={`${id}-${name}-error`} className="field-error" role="alert">
        {problems[name]}
      </small>
    ) : null;

  return (
    <>
      <p className="muted" role="status">
        {inUseText(saved)}
        {saved.updated_at ? ` Last changed by ${saved.updated_by} on ${formatDateTime(saved.updated_at)}.` : ""}
      </p>
      <form className="form llm-form" onSubmit={submit} noValidate aria-label="LLM provider">
        <div className="field">
          <label htmlFor={`${id}-base_url`}>Base URL</label>
          <input
            {...field("base_url")}
            type="url"
            value={baseUrl}
            maxLength={2000}
            placeholder="https://api.openai.com/v1"
            autoComplete="off"
            onChange={(e) => setBaseUrl(e.target.value)}
          />
          <small id={`${id}-base_url-hint`} className="muted">
            The API's address, up to <code>/v1</code> (Ollama: <code>http://host:11434/v1</code>). The workspace's
            outbound rules apply to it.
          </small>
          {fieldError("base_url")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-model`}>Model</label>
          <input
            {...field("model")}
            type="text"
            value={model}
            maxLength={200}
            placeholder="gpt-4o-mini"
            autoComplete="off"
            onChange={(e) => setModel(e.target.value)}
          />
          <small id={`${id}-model-hint`} className="muted">
            Used by agent steps that name no model of their own.
          </small>
          {fieldError("model")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-api_key`}>API key</label>
          <input
            {...field("api_key")}
            type="password"
            value={apiKey}
            maxLength={4000}
            autoComplete="new-password"
            placeholder={saved.api_key_set ? "A key is stored: leave empty to keep it" : "Optional"}
            disabled={clearKey}
            onChange={(e) => setApiKey(e.target.value)}
          />
          <small id={`${id}-api_key-hint`} className="muted">
            {saved.api_key_set
              ? "A key is stored (encrypted; it is never shown). Type a new one to replace it."
              : "No key is stored. Stored encrypted and never shown again."}
          </small>
          {fieldError("api_key")}
          {saved.api_key_set ? (
            <label className="settings__choice">
              <input type="checkbox" checked={clearKey} onChange={(e) => setClearKey(e.target.checked)} />
              <span>Remove the stored key</span>
            </label>
          ) : null}
        </div>
        {unplaced ? (
          <p className="notice notice--error" role="alert">
            Not saved: {errorMessage(save.error)}
          </p>
        ) : null}
        {savedNote && !dirty ? (
          <p className="notice notice--info" role="status">
            Saved. Press Test to ask the provider a question.
          </p>
        ) : null}
        <div className="llm-form__actions">
          <button type="submit" className="button" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save"}
          </button>
          <button
            type="button"
            className="button button--secondary"
            disabled={test.isPending || dirty || saved.in_use === "none"}
            aria-describedby={`${id}-test-hint`}
            onClick={() => test.mutate()}
          >
            {test.isPending ? "Testing…" : "Test"}
          </button>
          {saved.in_use === "workspace" ? (
            <button
              type="button"
              className="button button--secondary"
              disabled={remove.isPending}
              onClick={() => remove.mutate()}
            >
              {saved.server_default.configured ? "Use the server's provider" : "Remove provider"}
            </button>
          ) : null}
        </div>
        <small id={`${id}-test-hint`} className="muted">
          {dirty ? "Save your changes first: Test asks the saved provider." : "Test sends one short question to the provider in use."}
        </small>
      </form>
      <FailureNotice mutation={remove} what="Not removed" />
      {test.isError ? (
        <p className="notice notice--error" role="alert">
          The test could not run: {errorMessage(test.error)}
        </p>
      ) : test.data?.ok ? (
        <div className="notice notice--info llm-test" role="status">
          <p className="notice__title">
            The provider answered{test.data.model ? ` (${test.data.model})` : ""}:
          </p>
          <blockquote className="llm-test__answer">{test.data.answer}</blockquote>
        </div>
      ) : test.data ? (
        <div className="notice notice--error llm-test" role="alert">
          <p className="notice__title">The test failed</p>
          <p className="llm-test__answer">{test.data.failure}</p>
        </div>
      ) : null}
    </>
  );
}
