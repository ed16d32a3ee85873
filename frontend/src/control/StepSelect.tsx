/** A select of steps by id (the step to pause before, to edit, to resume from), each option named by `label`. */
export function StepSelect<S extends { step_id: string }>({
  id,
  steps,
  value,
  onChange,
  label,
}: {
  id: string;
  steps: S[];
  value: string;
  onChange: (stepId: string) => void;
  label: (step: S) => string;
}) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      {steps.map((step) => (
        <option key={step.step_id} value={step.step_id}>
          {label(step)}
        </option>
      ))}
    </select>
  );
}
