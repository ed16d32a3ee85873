import { problems } from "./forms";
import { FailureNotice } from "../components/QueryState";

/** Under a trigger's form: why a JSON field is not usable yet, and why the server refused to create it. */
export function FormProblems({
  field,
  problem,
  create,
}: {
  /** The JSON field's name, leading its problem ("Mapping must be a JSON object"). */
  field: string;
  problem?: string;
  create: { isError: boolean; error: unknown };
}) {
  return (
    <>
      {problem ? <p className="notice notice--error">{field} {problem}</p> : null}
      <FailureNotice mutation={create} what="Not created" describe={problems} />
    </>
  );
}
