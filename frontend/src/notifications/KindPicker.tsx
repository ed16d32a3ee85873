import { EVENT_KINDS, KIND_LABELS, type EventKind } from "./settingsApi";

/** Checkboxes of the event kinds, for a webhook endpoint or a route. */
export function KindPicker({ value, onChange, name }: { value: EventKind[]; onChange: (v: EventKind[]) => void; name: string }) {
  return (
    <fieldset className="settings__choices">
      <legend>{name}</legend>
      {EVENT_KINDS.map((kind) => (
        <label key={kind} className="settings__choice">
          <input
            type="checkbox"
            checked={value.includes(kind)}
            onChange={(e) => onChange(e.target.checked ? [...value, kind] : value.filter((k) => k !== kind))}
          />
          <span>{KIND_LABELS[kind]}</span>
        </label>
      ))}
    </fieldset>
  );
}
