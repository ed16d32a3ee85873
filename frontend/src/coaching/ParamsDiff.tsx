import { diffParams, type DiffKind } from "./diff";
import { formatValue } from "../format";

const MARK: Record<DiffKind, string> = { added: "+", removed: "−", changed: "~" };

function Value({ value }: { value: unknown }) {
  return <code className="diff__value">{typeof value === "string" ? JSON.stringify(value) : formatValue(value)}</code>;
}

/** The field-by-field changes between two sets of params, in words and symbols (not colour alone). */
export function ParamsDiff({
  before,
  after,
  title,
  emptyText = "No changes from the suggestion.",
}: {
  before: unknown;
  after: unknown;
  title: string;
  emptyText?: string;
}) {
  const entries = diffParams(before, after);
  return (
    <section className="diff" aria-label={title}>
      <h3 className="diff__title">{title}</h3>
      {entries.length === 0 ? (
        <p className="muted">{emptyText}</p>
      ) : (
        <ul className="diff__list">
          {entries.map((entry) => (
            <li key={`${entry.kind}:${entry.path}`} className={`diff__item diff__item--${entry.kind}`}>
              <span className="diff__mark" aria-hidden="true">
                {MARK[entry.kind]}
              </span>{" "}
              <span className="diff__kind">{entry.kind}</span> <code className="diff__path">{entry.path}</code>
              {entry.kind === "changed" ? (
                <>
                  : <Value value={entry.before} /> <span aria-hidden="true">→</span>
                  <span className="visually-hidden">becomes</span> <Value value={entry.after} />
                </>
              ) : entry.kind === "added" ? (
                <>
                  : <Value value={entry.after} />
                </>
              ) : (
                <>
                  {" "}
                  (was <Value value={entry.before} />)
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
